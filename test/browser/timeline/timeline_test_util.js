// Helpers shared by the timeline checks files.
'use strict';

// Width of the timeline's row labels, px (timeline.js LABEL_W).
const LABEL_W = 280;

// "1.234 ms" (the page's duration text) -> ns; null when none.
function parseDuration(text) {
  const m = /([0-9.]+) (s|ms|µs|ns)/.exec(text);
  if (!m) return null;
  return Number(m[1]) * {s: 1e9, ms: 1e6, 'µs': 1e3, ns: 1}[m[2]];
}

module.exports = {LABEL_W, parseDuration};
