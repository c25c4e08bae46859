'use strict';
(function () {
  // Data written by aiprof (src/view/timeline/timeline_html.cc). Times are
  // integer ns relative to D.origin_ns; arrays marked delta-encoded are
  // decoded once here. Trace text only ever reaches the DOM as textContent
  // and the canvas through fillText.
  const D = JSON.parse(document.getElementById('aiprof-data').textContent);
  const undelta = (a) => { let s = 0; for (let i = 0; i < a.length; i++) { s += a[i]; a[i] = s; } return a; };
  const CAUSE_COLORS = D.cause_colors;  // the report's (svg_chart.h IdleCauseColor)
  const LABEL_W = 280, ROW_H = 16, HEADER_H = 18, STEP_H = 18, GAP_H = 14, COUNTER_H = 36, SAMPLE_H = 6, MARK_H = 18, INST_H = 8;

  const names = D.names;
  const RUN_FILL = 'hsl(35,10%,60%)', RUN_MATCH = '#d10', RUN_DIM = 'hsla(35,10%,82%,0.35)';
  const DENSITY_FILL = [];
  for (let i = 0; i <= 7; i++) DENSITY_FILL.push('rgba(70,90,140,' + (0.35 + 0.65 * i / 7).toFixed(3) + ')');
  const hue = new Float32Array(names.length);
  // aiprof diff --timeline: names the diff paired under different names are
  // coloured as their partner (D.color_as: [name, colour name] pairs).
  const colorAs = new Map(Array.isArray(D.color_as) ? D.color_as : []);
  for (let i = 0; i < names.length; i++) {
    let h = 2166136261;
    const s = colorAs.has(names[i]) ? colorAs.get(names[i]) : names[i];
    for (let k = 0; k < s.length; k++) { h ^= s.charCodeAt(k); h = Math.imul(h, 16777619); }
    hue[i] = (h >>> 0) % 360;
  }
  const sliceAt = new Map();  // trace slice id -> [row, index]
  D.rows.forEach((row, r) => {
    if (row.kind === 'slices') {
      undelta(row.ts); undelta(row.id); undelta(row.sts);
      row.byDepth = [];
      for (let d = 0; d < row.depth; d++) row.byDepth.push([]);
      for (let i = 0; i < row.ts.length; i++) { row.byDepth[row.d[i]].push(i); sliceAt.set(row.id[i], [r, i]); }
      // Running maximum of slice ends per depth, for binary search of the first visible slice.
      row.endMax = row.byDepth.map((idx) => {
        const e = new Float64Array(idx.length);
        let m = -Infinity;
        idx.forEach((i, k) => { m = Math.max(m, row.ts[i] + row.dur[i]); e[k] = m; });
        return e;
      });
      row.lod.forEach((level) => level.forEach((db) => undelta(db.b)));
    } else {
      undelta(row.cts);
      row.vmax = 0; row.vmin = 0;
      for (const v of row.cv) if (v !== null) { row.vmax = Math.max(row.vmax, v); row.vmin = Math.min(row.vmin, v); }
    }
  });
  D.gaps.forEach((g) => {
    undelta(g.ts);
    g.end = new Float64Array(g.ts.length);
    let m = -Infinity;
    g.ts.forEach((t, k) => { m = Math.max(m, t + g.dur[k]); g.end[k] = m; });
  });
  // Critical path overlay (aiprof view --timeline --critical-path): row.cp[i]
  // is 1 for a slice on some step's path; D.path.edges holds the
  // dependencies as [from, to, kind, ends] quadruples of trace slice ids.
  const P = D.path || null;
  let pathOn = P !== null;
  if (P) {
    undelta(P.slices);
    D.rows.forEach((row) => { if (row.kind === 'slices') row.cp = new Uint8Array(row.ts.length); });
    for (const id of P.slices) { const a = sliceAt.get(id); if (a) D.rows[a[0]].cp[a[1]] = 1; }
  }
  const PATH_COLOR = '#b0002a', PATH_RUN = '#b0002a';
  // Instants (D.instants, only for traces that have some): row.inst holds
  // one group per kind (D.instants.kinds[k]: cat, name, fault), each with its
  // instants' times (delta-encoded) or, over the page's budget, count bins
  // per level (D.instants.levels). A row draws one strip per class: page
  // fault records of `aiprof trace` first, then every other instant.
  const I = D.instants || null;
  const INST_RGB = ['55,71,79', '194,24,91'];  // other, page fault
  D.rows.forEach((row) => {
    row.strips = [];
    if (!I || !row.inst) return;
    for (const g of row.inst) {
      if (g.ts) undelta(g.ts);
      if (g.lod) g.lod.forEach((l) => undelta(l.b));
    }
    for (const fault of [true, false]) {
      const groups = row.inst.filter((g) => (I.kinds[g.k].fault === 1) === fault);
      if (groups.length) row.strips.push({ fault, groups });
    }
  });
  // Height of a row's slices: one row at least, none for a thread that only has instants.
  const slicesH = (row) => (row.depth || !row.strips.length ? Math.max(1, row.depth) * ROW_H : 0);
  const instKindLabel = (k) => (I.kinds[k].fault ? 'page fault records' : I.kinds[k].name + ' (' + I.kinds[k].cat + ')');
  // Where a fault kind's period and cost come from: the page's own figures,
  // or, on a page of several captures (aiprof diff --timeline), the kind's
  // source (I.fault_sources[kind.src]: label, fault_period, fault_cost_ns).
  const faultSource = (k) => (I.fault_sources ? I.fault_sources[I.kinds[k].src] : I);
  // Figures of the page fault records in `byKind` (kind -> records): per
  // source, faults (each record stands for its capture's
  // capture.page_faults.period faults) and their estimated time.
  function faultFigures(byKind) {
    const per = new Map();
    for (const [k, n] of byKind) {
      if (!I.kinds[k].fault) continue;
      const src = faultSource(k);
      per.set(src, (per.get(src) || 0) + n);
    }
    const out = [];
    for (const [src, records] of per) {
      const faults = records * src.fault_period, tag = src.label ? ' (' + src.label + ')' : '';
      out.push(['page faults' + tag, String(faults) + (src.fault_period > 1 ? ' (' + records + ' records × ' + src.fault_period + ' faults each)' : '')]);
      out.push(['estimated fault time' + tag, src.fault_cost_ns === null
        ? 'unknown: the capture has no measured cost of a fault (capture.page_fault_cost_ns)'
        : '≈ ' + fmt(Math.round(faults * src.fault_cost_ns)) + ' (estimate: ' + faults + ' faults × ' + src.fault_cost_ns +
          ' ns, the cost of one first-touch fault measured at capture start)']);
    }
    return out;
  }
  // Colour by module (--color-by module): row.m[i] indexes D.modules.names
  // (-1: no module); colours hash the module's name like slice names do.
  const MOD = D.modules || null;
  let byModule = MOD !== null;
  const NO_MODULE = ['hsla(0,0%,78%,1)', 'hsla(0,0%,88%,0.35)'];
  const modHue = [];
  if (MOD) {
    for (const s of MOD.names) {
      let h = 2166136261;
      for (let k = 0; k < s.length; k++) { h ^= s.charCodeAt(k); h = Math.imul(h, 16777619); }
      modHue.push((h >>> 0) % 360);
    }
  }
  const modCache = [[], []];
  function moduleColor(m, dim) {
    if (m < 0) return NO_MODULE[dim ? 1 : 0];
    const c = modCache[dim ? 1 : 0];
    return c[m] || (c[m] = 'hsla(' + modHue[m] + ',65%,' + (dim ? '82%,0.35)' : '58%,1)'));
  }
  const fillOf = (row, i, dim) => (byModule ? moduleColor(row.m[i], dim) : sliceColor(row.n[i], dim));
  let pathEdgesDrawn = 0;
  const flowsOf = new Map();
  for (let i = 0; i < D.flows.length; i += 2) {
    for (const id of [D.flows[i], D.flows[i + 1]]) {
      if (!flowsOf.has(id)) flowsOf.set(id, []);
      flowsOf.get(id).push(i);
    }
  }

  // ---- lanes: rank header, steps, gaps, then layers and their rows ----
  const collapsed = new Set();
  let lanes = [], totalH = 0;
  const rankName = (r) => (r >= 0 && D.rank_labels && D.rank_labels[r]) || (r < 0 ? 'trace (no rank)' : 'rank ' + r);
  function buildLanes() {
    lanes = [];
    let y = 0;
    const add = (lane, h) => { lane.y = y; lane.h = h; lanes.push(lane); y += h; };
    if (D.markers.length) {
      // Overlapping findings go on sub-rows (first that is free).
      const ends = [];
      D.markers.map((m, i) => i).sort((a, b) => D.markers[a].ts - D.markers[b].ts).forEach((i) => {
        const m = D.markers[i];
        let k = ends.findIndex((e) => e <= m.ts);
        if (k < 0) { k = ends.length; ends.push(0); }
        ends[k] = m.ts + Math.max(m.dur, span / 200);
        m.sub = k;
      });
      add({ type: 'markers', label: (D.markers_label || 'findings of diagnose') + ' (' + D.markers.length + ')' }, MARK_H * Math.max(1, ends.length));
    }
    const ranks = [...new Set(D.rows.map((r) => r.rank).concat(D.steps.rank, D.gaps.map((g) => g.rank)))];
    ranks.sort((a, b) => (a < 0) - (b < 0) || a - b);
    for (const rank of ranks) {
      const rkey = 'r' + rank;
      add({ type: 'header', label: rankName(rank), key: rkey, level: 0 }, HEADER_H);
      if (collapsed.has(rkey)) continue;
      const steps = [];
      D.steps.rank.forEach((sr, i) => { if (sr === rank) steps.push(i); });
      if (steps.length) add({ type: 'steps', label: 'steps (' + steps.length + ')', steps }, STEP_H);
      D.gaps.forEach((g) => { if (g.rank === rank) add({ type: 'gaps', label: g.label + ' (' + g.total + ')', gap: g }, GAP_H); });
      let layer = null;
      D.rows.forEach((row, r) => {
        if (row.rank !== rank) return;
        const lkey = rkey + '/' + row.layer;
        if (row.layer !== layer) { layer = row.layer; add({ type: 'header', label: row.layer, key: lkey, level: 1 }, HEADER_H); }
        if (collapsed.has(lkey)) return;
        if (row.kind === 'counter') add({ type: 'counter', label: row.label, row, r }, COUNTER_H);
        else add({ type: 'slices', label: row.label, row, r }, slicesH(row) + (row.sts.length ? SAMPLE_H : 0) + row.strips.length * INST_H + 4);
      });
    }
    totalH = y;
  }

  // ---- view state ----
  const canvas = document.getElementById('canvas');
  const ctx = canvas.getContext('2d');
  const main = document.getElementById('main');
  const tip = document.createElement('div');
  tip.id = 'tip';
  document.body.appendChild(tip);
  const span = Math.max(1, D.span_ns);
  let v0 = 0, v1 = span, scrollY = 0, W = 0, H = 0;
  let selected = null;   // {r, i} or {marker}
  let selection = null;  // {t0, t1, y0, y1}
  let match = null;      // Uint8Array over names, or null
  const plotW = () => Math.max(1, W - LABEL_W);
  const xOf = (t) => LABEL_W + (t - v0) / (v1 - v0) * plotW();
  const tOf = (x) => v0 + (x - LABEL_W) / plotW() * (v1 - v0);

  function fmt(ns) {
    const a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(2) + ' µs';
    return ns + ' ns';
  }
  function setView(a, b) {
    const minW = 100;  // ns
    let w = Math.max(minW, Math.min(span * 1.2, b - a));
    a = Math.max(-span * 0.1, Math.min(a, span * 1.1 - w));
    v0 = a; v1 = a + w;
    const r = document.getElementById('range');
    r.textContent = 'view +' + fmt(v0) + ' … +' + fmt(v1) + ' (' + fmt(v1 - v0) + ')';
    r.dataset.start = String(Math.round(v0));
    r.dataset.end = String(Math.round(v1));
    requestDraw();
  }
  function zoom(factor, atX) {
    const t = tOf(atX);
    setView(t - (t - v0) * factor, t + (v1 - t) * factor);
  }
  function pan(dt) { setView(v0 + dt, v1 + dt); }
  function scroll(dy) {
    scrollY = Math.max(0, Math.min(Math.max(0, totalH - H + 20), scrollY + dy));
    requestDraw();
  }

  // ---- drawing ----
  const colorCache = [new Array(names.length), new Array(names.length)];
  function sliceColor(n, dim) {
    const c = colorCache[dim ? 1 : 0];
    return c[n] || (c[n] = 'hsla(' + hue[n] + ',55%,' + (dim ? '82%,0.35)' : '62%,1)'));
  }
  // First index k >= from with endMax[k] > t (endMax is non-decreasing).
  function firstVisible(endMax, t, from) {
    let lo = from || 0, hi = endMax.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (endMax[mid] <= t) lo = mid + 1; else hi = mid; }
    return lo;
  }
  function lodLevel() {
    const nsPerPx = (v1 - v0) / plotW();
    let best = -1;
    for (let l = 0; l < D.levels.length; l++) if (D.levels[l] >= nsPerPx) best = l;
    return D.levels.length ? Math.max(0, best) : -1;
  }
  function drawSlices(lane, top) {
    const row = lane.row;
    const level = lodLevel();
    if (level >= 0 && row.lod[level]) {
      const w = D.levels[level];
      for (const db of row.lod[level]) {
        const y = top + 2 + db.d * ROW_H;
        let k = 0, hi = db.b.length;
        const first = Math.floor(v0 / w) - 1;
        while (k < hi) { const mid = (k + hi) >> 1; if (db.b[mid] < first) k = mid + 1; else hi = mid; }
        // Bins narrower than a pixel merge into it (the darkest wins); touching
        // pixels of the same shade are drawn as one rectangle.
        let rx = -1, rw = 0, rshade = -1;  // pending run
        let px = -1, pw = 0, pocc = 0;     // pending pixel
        const flushRun = () => {
          if (rshade >= 0) { ctx.fillStyle = DENSITY_FILL[rshade]; ctx.fillRect(rx, y + 1, rw, ROW_H - 2); }
          rshade = -1;
        };
        const flushPixel = () => {
          if (px < 0) return;
          const shade = Math.round(pocc * (DENSITY_FILL.length - 1));
          if (shade === rshade && Math.abs(rx + rw - px) < 0.5) rw = px + pw - rx;
          else { flushRun(); rx = px; rw = pw; rshade = shade; }
          px = -1;
        };
        for (; k < db.b.length; k++) {
          const b0 = db.b[k] * w;
          if (b0 > v1) break;
          const x = xOf(b0), x2 = xOf(b0 + w);
          const occ = Math.min(1, db.t[k] / w);
          const fx = Math.floor(x);
          if (x2 - x < 1 && fx === px) { pocc = Math.max(pocc, occ); continue; }
          flushPixel();
          px = x2 - x < 1 ? fx : x; pw = x2 - x < 1 ? 1 : x2 - x; pocc = occ;
        }
        flushPixel();
        flushRun();
      }
    }
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    for (let d = 0; d < row.depth; d++) {
      const idx = row.byDepth[d];
      const y = top + 2 + d * ROW_H;
      // Slices thinner than a pixel that follow each other within a pixel are
      // drawn as one run (Perfetto does the same): in the slice's own colour
      // when the run holds one slice, else in a neutral colour (highlighted
      // when a search matches one of them).
      let run = null;
      const flushRun = () => {
        if (!run) return;
        ctx.fillStyle = pathOn ? (run.cp ? PATH_RUN : RUN_DIM)
          : run.n === 1 ? fillOf(row, run.fi, match !== null && !match[run.first])
          : match !== null ? (run.match ? RUN_MATCH : RUN_DIM) : RUN_FILL;
        ctx.fillRect(run.x0, y, Math.max(1, run.x1 - run.x0), ROW_H - 1);
        run = null;
      };
      for (let k = firstVisible(row.endMax[d], v0); k < idx.length; k++) {
        const i = idx[k];
        const ts = row.ts[i];
        if (ts > v1) break;
        const dur = row.dur[i];
        const x = xOf(ts), x2 = xOf(ts + dur);
        const n = row.n[i];
        if (x2 - x < 1) {
          if (run && x <= run.x1 + 1) {
            run.x1 = Math.max(run.x1, x2);
            run.n++;
            if (match !== null && match[n]) run.match = true;
            if (pathOn && row.cp[i]) run.cp = true;
            if (match === null && !pathOn) {
              // Skip what ends inside the run's last pixel: it adds nothing to draw.
              const k2 = firstVisible(row.endMax[d], tOf(Math.floor(run.x1) + 1), k + 1);
              run.n += k2 - k - 1;
              k = k2 - 1;
            }
          } else {
            flushRun();
            run = { x0: x, x1: Math.max(x2, x + 1), n: 1, first: n, fi: i, match: match !== null && match[n] === 1, cp: pathOn && row.cp[i] === 1 };
          }
          continue;
        }
        flushRun();
        const onPath = pathOn && row.cp[i] === 1;
        const dim = (match !== null && !match[n]) || (pathOn && !onPath);
        ctx.fillStyle = fillOf(row, i, dim);
        const w = x2 - x;
        ctx.fillRect(x, y, w, ROW_H - 1);
        if (onPath) {
          ctx.strokeStyle = PATH_COLOR; ctx.lineWidth = 2; ctx.strokeRect(x + 1, y + 1, Math.max(0, w - 2), ROW_H - 3);
        }
        if (selected && selected.r === lane.r && selected.i === i) {
          ctx.strokeStyle = '#000'; ctx.lineWidth = 2; ctx.strokeRect(x, y, w, ROW_H - 1);
        } else if (match !== null && match[n]) {
          ctx.strokeStyle = '#d10'; ctx.lineWidth = 1; ctx.strokeRect(x + 0.5, y + 0.5, w - 1, ROW_H - 2);
        }
        if (w > 24) {
          const xs = Math.max(x, LABEL_W) + 3, room = Math.min(x2, W) - xs - 2;
          if (room > 10) {
            ctx.fillStyle = dim ? '#888' : '#111';
            ctx.fillText(clip(names[n], room), xs, y + ROW_H / 2);
          }
        }
      }
      flushRun();
    }
    if (row.sts.length) {
      const y = top + 2 + row.depth * ROW_H;
      ctx.fillStyle = '#2a7';
      let last = -1;
      for (let k = firstVisible(row.sts, v0); k < row.sts.length; k++) {
        const t = row.sts[k];
        if (t > v1) break;
        const x = Math.floor(xOf(t));
        if (x === last) continue;
        last = x;
        ctx.fillRect(x, y, 1, SAMPLE_H - 1);
      }
    }
    row.strips.forEach((strip, s) => drawInstantStrip(strip, instStripTop(row, top, s)));
  }
  // ---- instants ----
  const instStripTop = (row, top, s) => top + 2 + row.depth * ROW_H + (row.sts.length ? SAMPLE_H : 0) + s * INST_H;
  // First index with a[i] >= v (a ascending).
  function lowerBound(a, v) {
    let lo = 0, hi = a.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (a[mid] < v) lo = mid + 1; else hi = mid; }
    return lo;
  }
  // The instants' level to draw: the finest whose bins are at least a pixel
  // wide, else (zoomed in past it) the finest; -1 when there is none.
  function instLevel() {
    if (!I || !I.levels.length) return -1;
    const nsPerPx = (v1 - v0) / plotW();
    let best = I.levels.length - 1;
    for (let l = I.levels.length - 1; l >= 0; l--) if (I.levels[l] >= nsPerPx) { best = l; break; }
    return best;
  }
  let instColumnsDrawn = 0;
  // One strip: the count of instants in each pixel column, darker for more
  // (log scale, relative to the strip's fullest column in view); bins wider
  // than a pixel (binned, zoomed in past the finest level) as blocks.
  function drawInstantStrip(strip, y) {
    const n = Math.ceil(plotW()) + 1, cnt = new Float64Array(n), wide = [];
    const lv = instLevel();
    for (const g of strip.groups) {
      if (g.ts) {
        for (let k = lowerBound(g.ts, v0); k < g.ts.length && g.ts[k] <= v1; k++) {
          cnt[Math.min(n - 1, Math.floor(xOf(g.ts[k]) - LABEL_W))]++;
        }
      } else if (lv >= 0 && g.lod[lv]) {
        const w = I.levels[lv], B = g.lod[lv];
        for (let k = lowerBound(B.b, Math.floor(v0 / w)); k < B.b.length && B.b[k] * w <= v1; k++) {
          const x = xOf(B.b[k] * w), x2 = xOf((B.b[k] + 1) * w);
          if (x2 - x < 1) cnt[Math.max(0, Math.min(n - 1, Math.floor(x - LABEL_W)))] += B.n[k];
          else wide.push([x, x2, B.n[k]]);
        }
      }
    }
    let max = 0;
    for (let i = 0; i < n; i++) max = Math.max(max, cnt[i]);
    for (const b of wide) max = Math.max(max, b[2]);
    if (!max) return;
    const rgb = INST_RGB[strip.fault ? 1 : 0], lm = Math.log1p(max);
    const shade = (c) => 'rgba(' + rgb + ',' + (0.35 + 0.65 * Math.log1p(c) / lm).toFixed(2) + ')';
    for (const b of wide) { ctx.fillStyle = shade(b[2]); ctx.fillRect(b[0], y + 1, Math.max(1, b[1] - b[0] - 1), INST_H - 2); }
    let last = '';
    for (let i = 0; i < n; i++) {
      if (!cnt[i]) continue;
      const f = shade(cnt[i]);
      if (f !== last) { ctx.fillStyle = f; last = f; }
      ctx.fillRect(LABEL_W + i, y, 1, INST_H - 1);
      instColumnsDrawn++;
    }
  }
  // Instants of `groups` in [t0, t1], by kind: exact for instants kept one
  // by one; binned ones count the bins `inside` [t0, t1] (wholly) or, when
  // not, touching it (hover).
  function countInstants(groups, t0, t1, inside, byKind) {
    let binned = false;
    for (const g of groups) {
      let c = 0;
      if (g.ts) c = lowerBound(g.ts, t1 + 1e-6) - lowerBound(g.ts, t0);
      else if (I.levels.length) {
        binned = true;
        const lv = inside ? I.levels.length - 1 : Math.max(0, instLevel()), w = I.levels[lv], B = g.lod[lv];
        for (let k = lowerBound(B.b, Math.floor(t0 / w)); k < B.b.length && B.b[k] * w <= t1; k++) {
          const a = B.b[k] * w, b = a + w;
          if (inside ? a >= t0 && b <= t1 : b > t0) c += B.n[k];
        }
      }
      if (c) byKind.set(g.k, (byKind.get(g.k) || 0) + c);
    }
    return binned;
  }
  function clip(s, room) {
    const cw = 6.2;  // approx. px per char at 11px
    const max = Math.floor(room / cw);
    if (s.length <= max) return s;
    return max <= 1 ? '' : s.slice(0, max - 1) + '…';
  }
  function drawCounter(lane, top) {
    const row = lane.row, h = lane.h - 6, base = top + lane.h - 3;
    const range = Math.max(1e-300, row.vmax - row.vmin);
    ctx.beginPath();
    ctx.moveTo(LABEL_W, base);
    let k = Math.max(0, firstVisible(row.cts, v0) - 1);
    let lastY = base;
    for (; k < row.cts.length; k++) {
      const v = row.cv[k] === null ? 0 : row.cv[k];
      const x = Math.max(LABEL_W, xOf(row.cts[k]));
      const y = base - (v - row.vmin) / range * h;
      ctx.lineTo(x, lastY); ctx.lineTo(x, y);
      lastY = y;
      if (row.cts[k] > v1) break;
    }
    ctx.lineTo(W, lastY); ctx.lineTo(W, base); ctx.closePath();
    ctx.fillStyle = 'rgba(40,120,200,0.35)'; ctx.fill();
    ctx.strokeStyle = 'rgba(40,120,200,0.9)'; ctx.lineWidth = 1; ctx.stroke();
    ctx.fillStyle = '#555'; ctx.font = '10px system-ui, sans-serif'; ctx.textBaseline = 'top';
    ctx.fillText('max ' + fmtNum(row.vmax), LABEL_W + 4, top + 2);
  }
  const fmtNum = (v) => (Math.abs(v) >= 1e6 ? v.toExponential(3) : String(Math.round(v * 1000) / 1000));
  function drawSteps(lane, top) {
    ctx.font = '11px system-ui, sans-serif'; ctx.textBaseline = 'middle';
    for (const i of lane.steps) {
      const ts = D.steps.ts[i], dur = D.steps.dur[i];
      if (ts > v1 || ts + dur < v0) continue;
      const x = xOf(ts), x2 = xOf(ts + dur);
      ctx.fillStyle = i % 2 ? '#b9d3ee' : '#cfe0f3';
      ctx.fillRect(x, top + 2, Math.max(1, x2 - x), lane.h - 4);
      if (x2 - x > 30) {
        const xs = Math.max(x, LABEL_W) + 3;
        ctx.fillStyle = '#123';
        ctx.fillText(clip(names[D.steps.n[i]] + ' ' + fmt(dur), Math.min(x2, W) - xs - 2), xs, top + lane.h / 2);
      }
    }
  }
  function drawGaps(lane, top) {
    const g = lane.gap;
    let last = -1;
    for (let k = firstVisible(g.end, v0); k < g.ts.length; k++) {
      const ts = g.ts[k];
      if (ts > v1) break;
      const x = xOf(ts), x2 = xOf(ts + g.dur[k]);
      if (x2 - x < 1 && Math.floor(x) <= last) {
        k = firstVisible(g.end, tOf(last + 1), k + 1) - 1;  // gaps do not overlap: skip the drawn pixel
        continue;
      }
      last = Math.floor(x2 - x < 1 ? x : x2);
      ctx.fillStyle = CAUSE_COLORS[g.cause[k]];
      ctx.fillRect(x, top + 2, Math.max(1, x2 - x), lane.h - 4);
    }
  }
  function drawMarkers(lane, top) {
    ctx.font = '11px system-ui, sans-serif'; ctx.textBaseline = 'middle';
    D.markers.forEach((m, i) => {
      if (m.ts > v1 || m.ts + m.dur < v0) return;
      const x = xOf(m.ts), x2 = xOf(m.ts + m.dur), y = top + m.sub * MARK_H;
      ctx.fillStyle = m.priority === 'high' ? 'rgba(210,40,40,0.85)' : m.priority === 'medium' ? 'rgba(230,140,20,0.85)' : 'rgba(120,120,120,0.85)';
      ctx.fillRect(x, y + 2, Math.max(3, x2 - x), MARK_H - 4);
      const xs = Math.max(x, LABEL_W) + 3;
      if (Math.min(x2, W) - xs > 20) { ctx.fillStyle = '#fff'; ctx.fillText(clip('⚑ ' + m.title, Math.min(x2, W) - xs - 2), xs, y + MARK_H / 2); }
      if (selected && selected.marker === i) {
        ctx.fillStyle = 'rgba(210,40,40,0.08)';
        ctx.fillRect(x, 0, Math.max(3, x2 - x), H);
      }
    });
  }
  function laneTopOf(r) {
    for (const l of lanes) if (l.r === r) return l.y - scrollY;
    return null;
  }
  function drawFlows() {
    if (!selected || selected.r === undefined) return;
    const row = D.rows[selected.r];
    const list = flowsOf.get(row.id[selected.i]) || [];
    ctx.strokeStyle = 'rgba(20,20,20,0.8)'; ctx.fillStyle = 'rgba(20,20,20,0.8)'; ctx.lineWidth = 1.2;
    for (const f of list) {
      const a = sliceAt.get(D.flows[f]), b = sliceAt.get(D.flows[f + 1]);
      if (!a || !b) continue;
      const ya = laneTopOf(a[0]), yb = laneTopOf(b[0]);
      if (ya === null || yb === null) continue;
      const ra = D.rows[a[0]], rb = D.rows[b[0]];
      const x0 = xOf(ra.ts[a[1]]), y0 = ya + 2 + ra.d[a[1]] * ROW_H + ROW_H / 2;
      const x1 = xOf(rb.ts[b[1]]), y1 = yb + 2 + rb.d[b[1]] * ROW_H + ROW_H / 2;
      ctx.beginPath();
      ctx.moveTo(x0, y0);
      ctx.bezierCurveTo(x0 + 30, y0, x1 - 30, y1, x1, y1);
      ctx.stroke();
      ctx.beginPath(); ctx.moveTo(x1, y1); ctx.lineTo(x1 - 6, y1 - 3); ctx.lineTo(x1 - 6, y1 + 3); ctx.closePath(); ctx.fill();
    }
  }
  // The critical path's dependencies between tracks, as arrows from the end
  // (or start) of one slice to the start (or end) of the next.
  function drawPathEdges() {
    pathEdgesDrawn = 0;
    if (!pathOn) return;
    const E = P.edges;
    ctx.strokeStyle = PATH_COLOR; ctx.fillStyle = PATH_COLOR; ctx.lineWidth = 1.5;
    for (let k = 0; k < E.length; k += 4) {
      const a = sliceAt.get(E[k]), b = sliceAt.get(E[k + 1]);
      if (!a || !b) continue;
      const ra = D.rows[a[0]], rb = D.rows[b[0]];
      const ta = ra.ts[a[1]] + (E[k + 3] & 1 ? ra.dur[a[1]] : 0), tb = rb.ts[b[1]] + (E[k + 3] & 2 ? rb.dur[b[1]] : 0);
      if (Math.max(ta, tb) < v0 || Math.min(ta, tb) > v1) continue;
      const ya = laneTopOf(a[0]), yb = laneTopOf(b[0]);
      if (ya === null || yb === null) continue;
      const x0 = xOf(ta), y0 = ya + 2 + ra.d[a[1]] * ROW_H + ROW_H / 2;
      const x1 = xOf(tb), y1 = yb + 2 + rb.d[b[1]] * ROW_H + ROW_H / 2;
      ctx.beginPath();
      ctx.moveTo(x0, y0);
      ctx.bezierCurveTo(x0 + 20, y0, x1 - 20, y1, x1, y1);
      ctx.stroke();
      ctx.beginPath(); ctx.moveTo(x1, y1); ctx.lineTo(x1 - 6, y1 - 3.5); ctx.lineTo(x1 - 6, y1 + 3.5); ctx.closePath(); ctx.fill();
      pathEdgesDrawn++;
    }
  }
  function drawAxis() {
    ctx.fillStyle = '#f6f6f8'; ctx.fillRect(0, 0, W, 18);
    const w = v1 - v0, target = w / (plotW() / 110);
    const p = Math.pow(10, Math.floor(Math.log10(target)));
    const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= target);
    ctx.fillStyle = '#555'; ctx.strokeStyle = '#ddd'; ctx.font = '10px system-ui, sans-serif'; ctx.textBaseline = 'middle';
    for (let t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
      const x = Math.round(xOf(t)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x, 18); ctx.lineTo(x, H); ctx.stroke();
      ctx.fillText('+' + fmt(t), x + 2, 9);
    }
  }
  let frame = 0;
  // Input redraws at most once per animation frame.
  function requestDraw() {
    if (!frame) frame = requestAnimationFrame(() => { frame = 0; draw(); });
  }
  function draw() {
    if (!W) return;
    instColumnsDrawn = 0;
    ctx.clearRect(0, 0, W, H);
    drawAxis();
    ctx.save();
    ctx.beginPath(); ctx.rect(0, 18, W, H - 18); ctx.clip();
    for (const lane of lanes) {
      const top = lane.y - scrollY + 18;
      if (top > H || top + lane.h < 18) continue;
      ctx.save();
      ctx.beginPath(); ctx.rect(LABEL_W, top, W - LABEL_W, lane.h); ctx.clip();
      if (lane.type === 'slices') drawSlices(lane, top);
      else if (lane.type === 'counter') drawCounter(lane, top);
      else if (lane.type === 'steps') drawSteps(lane, top);
      else if (lane.type === 'gaps') drawGaps(lane, top);
      else if (lane.type === 'markers') drawMarkers(lane, top);
      ctx.restore();
      drawLabel(lane, top);
    }
    ctx.save();
    ctx.beginPath(); ctx.rect(LABEL_W, 18, W - LABEL_W, H - 18); ctx.clip();
    ctx.translate(0, 18);
    drawPathEdges();
    drawFlows();
    ctx.restore();
    if (D.boundaries && D.boundaries.length) {
      // Boundaries the page was given (aiprof diff --timeline: the slots of the aligned steps).
      ctx.save();
      ctx.beginPath(); ctx.rect(LABEL_W, 18, W - LABEL_W, H - 18); ctx.clip();
      ctx.strokeStyle = 'rgba(20,30,70,0.6)'; ctx.lineWidth = 1; ctx.setLineDash([4, 3]);
      ctx.beginPath();
      for (const b of D.boundaries) {
        if (b < v0 || b > v1) continue;
        const x = Math.round(xOf(b)) + 0.5;
        ctx.moveTo(x, 18); ctx.lineTo(x, H);
      }
      ctx.stroke();
      ctx.restore();
    }
    if (selection) {
      const x = xOf(Math.min(selection.t0, selection.t1)), x2 = xOf(Math.max(selection.t0, selection.t1));
      ctx.fillStyle = 'rgba(30,110,220,0.12)'; ctx.fillRect(x, 18, x2 - x, H);
      ctx.strokeStyle = 'rgba(30,110,220,0.8)'; ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(x + 0.5, 18); ctx.lineTo(x + 0.5, H); ctx.moveTo(x2 + 0.5, 18); ctx.lineTo(x2 + 0.5, H); ctx.stroke();
    }
    ctx.restore();
  }
  function drawLabel(lane, top) {
    ctx.fillStyle = lane.type === 'header' ? (lane.level === 0 ? '#dfe3ea' : '#eceef2') : '#fbfbfc';
    ctx.fillRect(0, top, LABEL_W, lane.h);
    ctx.strokeStyle = '#e4e4e4'; ctx.beginPath(); ctx.moveTo(0, top + lane.h - 0.5); ctx.lineTo(W, top + lane.h - 0.5); ctx.stroke();
    ctx.fillStyle = '#222'; ctx.font = (lane.type === 'header' ? 'bold ' : '') + '11px system-ui, sans-serif'; ctx.textBaseline = 'middle';
    const indent = lane.type === 'header' ? 4 + lane.level * 10 : 24;
    const text = lane.type === 'header' ? (collapsed.has(lane.key) ? '▸ ' : '▾ ') + lane.label : lane.label;
    ctx.fillText(clip(text, LABEL_W - indent - 4), indent, top + Math.min(lane.h, 18) / 2);
  }

  // ---- hit testing, details, selection ----
  function laneAt(y) {
    const yy = y - 18 + scrollY;
    for (const l of lanes) if (yy >= l.y && yy < l.y + l.h) return l;
    return null;
  }
  function hit(x, y) {
    const lane = laneAt(y);
    if (!lane || x < LABEL_W) return { lane };
    const t = tOf(x), tol = 2 * (v1 - v0) / plotW();
    const top = lane.y - scrollY + 18;
    if (lane.type === 'slices' && lane.row.strips.length) {
      const row = lane.row, s = Math.floor((y - instStripTop(row, top, 0)) / INST_H);
      if (s >= 0 && s < row.strips.length) {
        const byKind = new Map(), t0 = tOf(Math.floor(x) - 1), t1 = tOf(Math.floor(x) + 2);
        const binned = countInstants(row.strips[s].groups, t0, t1, false, byKind);
        if (byKind.size) return { lane, inst: { fault: row.strips[s].fault, t0, t1, byKind, binned } };
        return { lane };
      }
    }
    if (lane.type === 'slices') {
      const row = lane.row, d = Math.floor((y - top - 2) / ROW_H);
      if (d >= 0 && d < row.depth) {
        const idx = row.byDepth[d];
        for (let k = firstVisible(row.endMax[d], t - tol); k < idx.length; k++) {
          const i = idx[k];
          if (row.ts[i] > t + tol) break;
          if (row.ts[i] + row.dur[i] >= t - tol) return { lane, slice: i };
        }
        const level = lodLevel();
        if (level >= 0 && row.lod[level]) {
          const w = D.levels[level], b = Math.floor(t / w);
          for (const db of row.lod[level]) {
            if (db.d !== d) continue;
            let lo = 0, hi = db.b.length;
            while (lo < hi) { const mid = (lo + hi) >> 1; if (db.b[mid] < b) lo = mid + 1; else hi = mid; }
            const k = lo < db.b.length && db.b[lo] === b ? lo : -1;
            if (k >= 0) return { lane, bin: { w, b, n: db.n[k], t: db.t[k], d } };
          }
        }
      }
    } else if (lane.type === 'gaps') {
      const g = lane.gap;
      for (let k = 0; k < g.ts.length; k++) if (g.ts[k] - tol <= t && g.ts[k] + g.dur[k] + tol >= t) return { lane, gap: k };
    } else if (lane.type === 'steps') {
      for (const i of lane.steps) if (D.steps.ts[i] <= t && D.steps.ts[i] + D.steps.dur[i] >= t) return { lane, step: i };
    } else if (lane.type === 'markers') {
      const sub = Math.floor((y - top) / MARK_H);
      for (let i = 0; i < D.markers.length; i++) {
        const m = D.markers[i];
        if (m.sub === sub && m.ts - 3 * tol <= t && m.ts + m.dur + 3 * tol >= t) return { lane, marker: i };
      }
    } else if (lane.type === 'counter') {
      const row = lane.row, k = firstVisible(row.cts, t) - 1;
      if (k >= 0 || row.cts.length) return { lane, counter: Math.max(0, k) };
    }
    return { lane };
  }
  function describe(h) {
    if (!h || !h.lane) return null;
    const L = h.lane;
    if (h.slice !== undefined) {
      const row = L.row, i = h.slice;
      const fl = flowsOf.get(row.id[i]) || [];
      const out = [['slice', names[row.n[i]]], ['category', D.cats[row.c[i]]], ['start', '+' + fmt(row.ts[i])],
        ['duration', fmt(row.dur[i])], ['depth', String(row.d[i])], ['track', L.label], ['flows', String(fl.length)]];
      if (P) out.push(['critical path', row.cp[i] ? 'on a step\'s critical path' : 'off the path']);
      if (MOD) out.push(['module', row.m[i] >= 0 ? MOD.names[row.m[i]] : '(none)']);
      return out;
    }
    if (h.inst) {
      const out = [];
      let records = 0;
      for (const [k, n] of h.inst.byKind) { out.push([instKindLabel(k), String(n)]); if (I.kinds[k].fault) records += n; }
      if (h.inst.fault) out.push(...faultFigures(h.inst.byKind));
      out.push(['at', '+' + fmt(Math.max(0, h.inst.t0)) + ' … +' + fmt(h.inst.t1) + ' (under the pointer)'], ['track', L.label]);
      if (h.inst.binned) out.push(['binned', 'counted in bins of ' + fmt(I.levels[Math.max(0, instLevel())]) + ' touching the pointer (over the page\'s budget of instants)']);
      return out;
    }
    if (h.bin) return [['merged slices', String(h.bin.n) + ' starting in this bin'], ['bin', '+' + fmt(h.bin.b * h.bin.w) + ' for ' + fmt(h.bin.w)],
      ['busy', fmt(h.bin.t) + ' (' + (100 * h.bin.t / h.bin.w).toFixed(1) + '%)'], ['why', 'shorter than ' + fmt(D.threshold_ns) + ': zoom detail not embedded'], ['track', L.label]];
    if (h.gap !== undefined) {
      const g = L.gap;
      return [['idle gap', fmt(g.dur[h.gap])], ['cause', D.causes[g.cause[h.gap]]], ['start', '+' + fmt(g.ts[h.gap])], ['timeline', g.label]];
    }
    if (h.step !== undefined) return [['step', names[D.steps.n[h.step]]], ['start', '+' + fmt(D.steps.ts[h.step])], ['duration', fmt(D.steps.dur[h.step])]];
    if (h.marker !== undefined) {
      const m = D.markers[h.marker];
      const out = [['finding', m.title], ['rule', m.rule + ' (' + m.bottleneck + ')'], ['priority', m.priority + ', confidence ' + m.confidence],
        ['impact', m.impact], ['placed at', m.where], ['rank', m.rank < 0 ? '?' : String(m.rank)], ['span', '+' + fmt(m.ts) + ' for ' + fmt(m.dur)]];
      if (m.search) out.push(['representative op', m.search]);
      return out;
    }
    if (h.counter !== undefined) {
      const row = L.row;
      return [['counter', L.label], ['value', fmtNum(row.cv[h.counter])], ['at', '+' + fmt(row.cts[h.counter])], ['points', row.cts.length + ' of ' + row.ctotal]];
    }
    return null;
  }
  function table(el, title, rows, head) {
    el.textContent = '';
    const h = document.createElement('h3');
    h.textContent = title;
    el.appendChild(h);
    const t = document.createElement('table');
    if (head) rows = [head].concat(rows);
    rows.forEach((r, ri) => {
      const tr = document.createElement('tr');
      r.forEach((c, ci) => {
        const td = document.createElement(head && ri === 0 ? 'th' : 'td');
        td.textContent = c;
        if (head && ci > 0) td.className = 'num';
        tr.appendChild(td);
      });
      t.appendChild(tr);
    });
    el.appendChild(t);
  }
  function showDetails(h) {
    const el = document.getElementById('details');
    const rows = describe(h);
    if (!rows) { el.textContent = 'Click a slice, gap, step or finding for details.'; return; }
    table(el, 'Details', rows);
  }
  // Totals over the lanes between y0 and y1 and the time range [t0, t1]:
  // slices shown in detail that overlap it (durations clipped to it), by
  // name; merged slices from the finest level's bins inside it; gaps by cause.
  function computeSelection(t0, t1, y0, y1) {
    if (t1 < t0) [t0, t1] = [t1, t0];
    if (y1 < y0) [y0, y1] = [y1, y0];
    const res = { t0, t1, count: 0, total_ns: 0, tracks: 0, byName: new Map(), merged: 0, mergedBusy: 0, gaps: D.causes.map(() => 0), gapCount: 0, inst: new Map(), instBinned: false };
    const fine = D.levels.length - 1;
    for (const lane of lanes) {
      if (lane.y + lane.h <= y0 || lane.y >= y1) continue;
      if (lane.type === 'slices') {
        const row = lane.row;
        let any = false;
        for (let i = 0; i < row.ts.length; i++) {
          const a = row.ts[i], b = a + row.dur[i];
          if (b < t0 || a > t1 || (b === t0 && row.dur[i] > 0)) continue;
          const c = Math.min(b, t1) - Math.max(a, t0);
          res.count++; res.total_ns += c; any = true;
          const e = res.byName.get(row.n[i]) || [0, 0];
          e[0]++; e[1] += c;
          res.byName.set(row.n[i], e);
        }
        if (fine >= 0 && row.lod[fine]) {
          const w = D.levels[fine];
          for (const db of row.lod[fine]) {
            for (let k = 0; k < db.b.length; k++) {
              const s = db.b[k] * w;
              if (s >= t0 && s + w <= t1) { res.merged += db.n[k]; res.mergedBusy += db.t[k]; }
            }
          }
        }
        for (const strip of row.strips) if (countInstants(strip.groups, t0, t1, true, res.inst)) res.instBinned = true;
        if (any) res.tracks++;
      } else if (lane.type === 'gaps') {
        const g = lane.gap;
        for (let k = 0; k < g.ts.length; k++) {
          const a = g.ts[k], b = a + g.dur[k];
          if (b <= t0 || a >= t1) continue;
          res.gaps[g.cause[k]] += Math.min(b, t1) - Math.max(a, t0);
          res.gapCount++;
        }
      }
    }
    return res;
  }
  function showSelection(res) {
    const el = document.getElementById('selection');
    if (!res) { el.textContent = 'Shift+drag to select a range: counts and totals appear here.'; delete el.dataset.count; return; }
    const rows = [...res.byName.entries()].sort((a, b) => b[1][1] - a[1][1]).slice(0, 12)
      .map(([n, e]) => [names[n], String(e[0]), fmt(e[1])]);
    table(el, 'Selection ' + fmt(res.t1 - res.t0) + ': ' + res.count + ' slices on ' + res.tracks + ' tracks, ' + fmt(res.total_ns) + ' (clipped to the range)',
      rows, ['name', 'count', 'time']);
    const extra = document.createElement('div');
    let s = '';
    if (res.merged) s += 'plus ' + res.merged + ' merged slices (' + fmt(res.mergedBusy) + ') in bins wholly inside. ';
    if (res.gapCount) s += 'Idle gaps: ' + res.gapCount + ' — ' + D.causes.map((c, i) => c + ' ' + fmt(res.gaps[i])).join(', ');
    extra.textContent = s;
    el.appendChild(extra);
    let instants = 0, records = 0;
    if (res.inst.size) {
      const it = document.createElement('div');
      it.id = 'selection-instants';
      const parts = [...res.inst.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => {
        instants += n;
        if (I.kinds[k].fault) records += n;
        return instKindLabel(k) + ' ' + n;
      });
      let text = 'Instants' + (res.instBinned ? ' (binned: bins wholly inside the range)' : '') + ': ' + parts.join(', ') + '.';
      if (records) text += ' ' + faultFigures(res.inst).map((r) => r[0] + ': ' + r[1]).join('; ') + '.';
      it.textContent = text;
      el.appendChild(it);
    }
    el.dataset.instants = String(instants);
    el.dataset.faultRecords = String(records);
    el.dataset.t0 = String(res.t0);
    el.dataset.t1 = String(res.t1);
    el.dataset.count = String(res.count);
    el.dataset.totalNs = String(res.total_ns);
    el.dataset.merged = String(res.merged);
  }

  // ---- search ----
  function search(q) {
    const el = document.getElementById('search-count');
    q = q.trim().toLowerCase();
    if (!q) { match = null; el.textContent = ''; delete el.dataset.count; draw(); return; }
    match = new Uint8Array(names.length);
    let count = 0, total = 0, shown = 0;
    for (let i = 0; i < names.length; i++) {
      if (names[i].toLowerCase().includes(q)) { match[i] = 1; count += D.name_count[i]; total += D.name_total_ns[i]; }
    }
    for (const row of D.rows) if (row.kind === 'slices') for (let i = 0; i < row.n.length; i++) shown += match[row.n[i]];
    el.textContent = count + ' matches, ' + fmt(total) + (shown < count ? ' (' + shown + ' in full detail)' : '');
    el.dataset.count = String(count);
    el.dataset.shown = String(shown);
    draw();
  }

  // ---- input ----
  let drag = null;
  canvas.tabIndex = 0;
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    if (e.shiftKey) scroll(e.deltaY || e.deltaX);
    else zoom(Math.exp(e.deltaY * 0.002), e.offsetX);
  }, { passive: false });
  canvas.addEventListener('mousedown', (e) => {
    canvas.focus();
    drag = { x: e.offsetX, y: e.offsetY, v0, v1, scrollY, moved: false, select: e.shiftKey };
  });
  window.addEventListener('mousemove', (e) => {
    const r = canvas.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
    if (drag) {
      if (Math.abs(x - drag.x) + Math.abs(y - drag.y) > 3) drag.moved = true;
      if (drag.select) {
        selection = { t0: tOf(drag.x), t1: tOf(x), y0: drag.y - 18 + scrollY, y1: y - 18 + scrollY };
        requestDraw();
      } else if (drag.moved) {
        const dt = (x - drag.x) / plotW() * (drag.v1 - drag.v0);
        scrollY = Math.max(0, Math.min(Math.max(0, totalH - H + 20), drag.scrollY - (y - drag.y)));
        setView(drag.v0 - dt, drag.v1 - dt);
      }
      tip.style.display = 'none';
      return;
    }
    if (x < 0 || y < 0 || x > W || y > H) { tip.style.display = 'none'; return; }
    const rows = describe(hit(x, y));
    if (!rows) { tip.style.display = 'none'; return; }
    tip.textContent = rows.map((r) => r[0] + ': ' + r[1]).join('\n');
    tip.style.left = Math.min(e.clientX + 12, window.innerWidth - 300) + 'px';
    tip.style.top = (e.clientY + 14) + 'px';
    tip.style.display = 'block';
  });
  window.addEventListener('mouseup', (e) => {
    if (!drag) return;
    const d = drag;
    drag = null;
    if (d.select && d.moved && selection) {
      showSelection(computeSelection(selection.t0, selection.t1, selection.y0, selection.y1));
      return;
    }
    if (d.moved) return;
    const h = hit(d.x, d.y);
    if (h.lane && h.lane.type === 'header' && d.x < LABEL_W) {
      if (collapsed.has(h.lane.key)) collapsed.delete(h.lane.key); else collapsed.add(h.lane.key);
      buildLanes(); scroll(0); return;
    }
    if (h.slice !== undefined) selected = { r: h.lane.r, i: h.slice };
    else if (h.marker !== undefined) {
      selected = { marker: h.marker };
      const m = D.markers[h.marker];
      if (m.search) { document.getElementById('search').value = m.search; search(m.search); }
    } else selected = null;
    showDetails(h);
    draw();
  });
  canvas.addEventListener('dblclick', (e) => {
    const h = hit(e.offsetX, e.offsetY);
    let a = null, b = null;
    if (h.slice !== undefined) { a = h.lane.row.ts[h.slice]; b = a + h.lane.row.dur[h.slice]; }
    else if (h.marker !== undefined) { a = D.markers[h.marker].ts; b = a + D.markers[h.marker].dur; }
    else if (h.step !== undefined) { a = D.steps.ts[h.step]; b = a + D.steps.dur[h.step]; }
    if (a !== null) { const pad = (b - a) * 0.1 + 100; setView(a - pad, b + pad); }
  });
  window.addEventListener('keydown', (e) => {
    if (e.target && e.target.tagName === 'INPUT') return;
    const k = e.key.toLowerCase(), mid = LABEL_W + plotW() / 2, w = v1 - v0;
    if (k === 'w') zoom(0.8, mid);
    else if (k === 's') zoom(1.25, mid);
    else if (k === 'a') pan(-0.15 * w);
    else if (k === 'd') pan(0.15 * w);
    else if (k === 'arrowup') scroll(-60);
    else if (k === 'arrowdown') scroll(60);
    else if (k === '0') setView(0, span);
    else if (k === 'c' && P) document.getElementById('cpath').click();
    else if (k === 'escape') { selection = null; selected = null; showSelection(null); showDetails(null); draw(); }
    else return;
    e.preventDefault();
  });
  document.getElementById('search').addEventListener('input', (e) => search(e.target.value));
  document.getElementById('reset').addEventListener('click', () => setView(0, span));
  function resize() {
    const r = main.getBoundingClientRect(), dpr = window.devicePixelRatio || 1;
    W = Math.max(300, r.width); H = Math.max(100, r.height);
    canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    draw();
  }
  window.addEventListener('resize', resize);

  // ---- header, legend ----
  document.getElementById('title').textContent = D.title;
  const c = D.counts;
  document.getElementById('lod').textContent = c.detailed === c.slices
    ? c.slices + ' slices, all in full detail'
    : c.slices + ' slices: ' + c.detailed + ' in full detail, ' + (c.slices - c.detailed) + ' shorter than ' + fmt(D.threshold_ns) + ' merged into density bars';
  const legend = document.getElementById('legend');
  const lh = document.createElement('h3');
  lh.textContent = 'Legend';
  legend.appendChild(lh);
  const gl = document.createElement('div');
  D.causes.forEach((cause, i) => {
    const sw = document.createElement('span');
    sw.className = 'sw'; sw.style.background = CAUSE_COLORS[i];
    gl.appendChild(sw);
    gl.appendChild(document.createTextNode('gap: ' + cause));
  });
  legend.appendChild(gl);
  const notes = document.createElement('div');
  notes.textContent = 'Density bars (blue-grey): slices merged by aiprof; darker = more of the bin covered. ' +
    'Warm grey: several slices each thinner than a pixel (zoom in). Green ticks: stack samples' +
    (c.sample_stride > 1 ? ' (1 in ' + c.sample_stride + ')' : '') + '. Gaps shown: ' + c.gaps_shown + ' of ' + c.gaps +
    '. Flows shown for the selected slice: ' + c.flows_shown + ' of ' + c.flows + ' have both ends in full detail.';
  legend.appendChild(notes);
  if (I) {
    const il = document.createElement('div');
    il.id = 'instant-legend';
    for (const [fault, text] of [[true, 'page faults'], [false, 'other instants']]) {
      const sw = document.createElement('span');
      sw.className = 'sw'; sw.style.background = 'rgb(' + INST_RGB[fault ? 1 : 0] + ')';
      il.appendChild(sw);
      il.appendChild(document.createTextNode(text));
    }
    let s = ': instants as ticks under their thread\'s slices, one strip per class, darker = more in the pixel column (hover or select for counts). ' +
      I.total + ' thread instants on the rows shown' + (I.hidden ? ' (' + I.hidden + ' on tracks not shown)' : '') + '. ' +
      (I.unscoped ? I.unscoped + ' process- or global-scoped instants not drawn. ' : '');
    if (I.binned) s += 'Over the page\'s budget: counted in bins (finest ' + (I.levels.length ? fmt(I.levels[I.levels.length - 1]) : 'none: no level fits') + '), not one by one. ';
    for (const src of I.fault_sources || [I]) {
      let records = 0;
      I.kinds.forEach((k, i) => { if (k.fault && faultSource(i) === src) records += k.total; });
      if (!records) continue;
      s += (src.label ? src.label + ': ' : '') + records + ' minor page fault records of aiprof trace, each standing for ' + src.fault_period + ' fault' + (src.fault_period > 1 ? 's' : '') +
        (src.fault_period_known ? '' : ' (capture.page_faults.period absent: 1 assumed)') + '; ' +
        (src.fault_cost_ns === null ? 'no measured cost of a fault in the capture. ' : 'estimated time = faults × ' + src.fault_cost_ns + ' ns (one first-touch fault, measured at capture start): an estimate. ');
    }
    il.appendChild(document.createTextNode(s));
    legend.appendChild(il);
  }
  if (D.note) {
    const pn = document.createElement('div');
    pn.id = 'page-note';
    pn.textContent = D.note;
    legend.insertBefore(pn, lh);
  }
  if (MOD) {
    const ml = document.createElement('div');
    ml.id = 'module-legend';
    const head = document.createElement('div');
    head.textContent = 'Colour by module (--color-by module): each slice in the colour of its innermost nn.Module ' +
      '(record_function and SDK spans count as modules; device work takes its launching call\'s); grey: no module. ' +
      'Largest modules by time of their slices not under a nested module' + ':';
    ml.appendChild(head);
    MOD.names.forEach((name, m) => {
      if (m >= 16) return;
      const sw = document.createElement('span');
      sw.className = 'sw'; sw.style.background = moduleColor(m, false);
      ml.appendChild(sw);
      ml.appendChild(document.createTextNode(name + ' ' + fmt(MOD.self_ns[m])));
    });
    legend.appendChild(ml);
    const mb = document.createElement('button');
    mb.id = 'colorby';
    const sync = () => { mb.textContent = 'colour: ' + (byModule ? 'module' : 'name'); mb.dataset.module = byModule ? '1' : '0'; };
    mb.addEventListener('click', () => { byModule = !byModule; sync(); draw(); });
    sync();
    document.getElementById('reset').after(mb);
  }
  if (P) {
    const pl = document.createElement('div');
    pl.id = 'path-legend';
    const sw = document.createElement('span');
    sw.className = 'sw path'; pl.appendChild(sw);
    const mean = P.window_steps ? P.window_path_ns / P.window_steps : 0;
    const parts = P.classes.map((c, i) => [c, P.by_class_ns[i]]).filter((e) => e[1] > 0).sort((a, b) => b[1] - a[1])
      .map((e) => e[0] + ' ' + (100 * e[1] / Math.max(1, P.window_path_ns)).toFixed(1) + '%');
    pl.appendChild(document.createTextNode('Critical path (toggle: the "critical path" button or C): slices on a step\'s path ' +
      'are outlined, the rest dimmed; arrows are the dependencies it follows between tracks (launch, stream order, sync, ' +
      'stream wait, collective, hand-off). ' + P.slices.length + ' of ' + P.slices_total + ' on-path slices and ' +
      (P.edges.length / 4) + ' of ' + P.edges_total + ' dependencies shown, over ' + P.steps + ' steps' +
      (P.window_steps ? '; steady steps\' mean path ' + fmt(mean) + ': ' + parts.join(', ') : '') + '.'));
    legend.appendChild(pl);
    const btn = document.createElement('button');
    btn.id = 'cpath';
    btn.title = 'Highlight each step\'s critical path (C)';
    const sync = () => { btn.textContent = 'critical path: ' + (pathOn ? 'on' : 'off'); btn.dataset.on = pathOn ? '1' : '0'; btn.setAttribute('aria-pressed', String(pathOn)); };
    btn.addEventListener('click', () => { pathOn = !pathOn; sync(); draw(); });
    sync();
    document.getElementById('reset').after(btn);
  }

  window.aiprofTimeline = {
    data: D,
    setView: (a, b) => { setView(a, b); draw(); },
    search,
    redraw: draw,
    view: () => ({ start: v0, end: v1 }),
    select: (t0, t1, y0, y1) => {
      selection = { t0, t1, y0, y1 }; const r = computeSelection(t0, t1, y0, y1); showSelection(r); draw();
      let instants = 0, faultRecords = 0, faults = 0;
      for (const [k, n] of r.inst) { instants += n; if (I.kinds[k].fault) { faultRecords += n; faults += n * faultSource(k).fault_period; } }
      return { count: r.count, total_ns: r.total_ns, merged: r.merged, instants, faultRecords, faults };
    },
    // Per slice row, its instants in [t0, t1] (page time; binned: the bins
    // wholly inside): rank, label, instants, fault records, faults (records
    // × their capture's period) and the fault source's label.
    instantsIn: (t0, t1) => D.rows.filter((row) => row.kind === 'slices').map((row) => {
      const byKind = new Map();
      for (const strip of row.strips) countInstants(strip.groups, t0, t1, true, byKind);
      let instants = 0, faultRecords = 0, faults = 0, source = null;
      for (const [k, n] of byKind) {
        instants += n;
        if (I.kinds[k].fault) { faultRecords += n; faults += n * faultSource(k).fault_period; source = faultSource(k).label || ''; }
      }
      return { rank: row.rank, label: row.label, instants, faultRecords, faults, source };
    }),
    // Instants: what the page holds and how many pixel columns the last draw filled.
    instants: () => ({ present: I !== null, total: I ? I.total : 0, binned: I ? I.binned === 1 : false,
      strips: D.rows.reduce((a, r) => a + r.strips.length, 0), columnsDrawn: instColumnsDrawn }),
    // The instant strips of the lanes, at their canvas y now.
    strips: () => lanes.filter((l) => l.type === 'slices').flatMap((l) => l.row.strips.map((st, k) => ({
      y: instStripTop(l.row, l.y - scrollY + 18, k), h: INST_H, fault: st.fault, label: l.label,
      total: st.groups.reduce((a, g) => a + g.total, 0) }))),
    // What hovering at canvas point (x, y) describes, as [label, text] pairs.
    describeAt: (x, y) => describe(hit(x, y)),
    lanes: () => lanes.map((l) => ({ type: l.type, label: l.label, y: l.y, h: l.h })),
    colorBy: () => (MOD ? (byModule ? 'module' : 'name') : 'name'),
    nameColor: (name) => { const i = names.indexOf(name); return i < 0 ? null : sliceColor(i, false); },
    criticalPath: () => ({ on: pathOn, present: P !== null, slices: P ? P.slices.length : 0, edges: P ? P.edges.length / 4 : 0, edgesDrawn: pathEdgesDrawn }),
  };
  buildLanes();
  showDetails(null);
  showSelection(null);
  resize();
  setView(0, span);
  window.aiprofReadyMs = performance.now();
  document.body.dataset.ready = '1';
})();
