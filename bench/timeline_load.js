// Opens a timeline page in headless Chromium (puppeteer-core) and prints how
// long it took to be ready (parse the embedded JSON, decode, lay out, first
// draw: performance.now() when the page's script finished), the time to the
// load event, the JS heap, then one full redraw at overview and zoomed in.
//
//   NODE_PATH=build/browser/node_modules node bench/timeline_load.js page.html [runs]
'use strict';
const path = require('node:path');
const puppeteer = require('puppeteer-core');

(async () => {
  const file = path.resolve(process.argv[2]);
  const runs = Number(process.argv[3] || 3);
  const args = ['--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'];
  if (process.getuid && process.getuid() === 0) args.push('--no-sandbox');
  const browser = await puppeteer.launch({executablePath: '/usr/bin/chromium', headless: true, args});
  try {
    for (let r = 0; r < runs; r++) {
      const page = await browser.newPage();
      await page.setViewport({width: 1600, height: 900});
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
      const t0 = Date.now();
      await page.goto('file://' + file, {waitUntil: 'load', timeout: 120000});
      await page.waitForFunction(() => document.body.dataset.ready === '1', {timeout: 120000});
      const wall = Date.now() - t0;
      const m = await page.evaluate(() => {
        const T = window.aiprofTimeline, D = T.data;
        const t = (f) => { const a = performance.now(); f(); return performance.now() - a; };
        const full = t(() => T.setView(0, D.span_ns));
        const zoom = t(() => T.setView(D.span_ns / 2, D.span_ns / 2 + D.span_ns / 1000));
        return {ready_ms: window.aiprofReadyMs, heap_mb: performance.memory ? performance.memory.usedJSHeapSize / 1048576 : -1,
                redraw_overview_ms: full, redraw_zoomed_ms: zoom, counts: D.counts, levels: D.levels.length};
      });
      console.log(JSON.stringify({run: r + 1, load_to_ready_wall_ms: wall, ...m, errors}));
      await page.close();
    }
  } finally {
    await browser.close();
  }
})().catch((e) => { console.error(e); process.exit(1); });
