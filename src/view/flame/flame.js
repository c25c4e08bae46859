// aiprof flame graph page (embedded into the HTML by cmake/embed_text.cmake).
// Reads the frame tree from <script type="application/json" id="flame-data">
// (columns: parent, name, module, kind, total, self; times in ns) and draws it
// as absolutely positioned <div>s whose names are set with textContent, so
// trace strings are never parsed as markup.
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('flame-data').textContent);
  const names = data.names;
  const ROW = 18;
  const MIN_WIDTH_PX = 0.5;
  const $ = (id) => document.getElementById(id);

  function fmtTime(ns) {
    const a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(3) + ' µs';
    return ns + ' ns';
  }
  function pct(x) {
    if (!isFinite(x)) return '–';
    return (100 * x).toFixed(2) + '%';
  }
  function fmtCalls(c) { return String(+Number(c).toPrecision(4)); }
  function hash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return (h >>> 0) / 4294967296;
  }

  // A tree for one chart: parents precede children (the writer guarantees it).
  function makeTree(parent, name, kind, total, self, module) {
    const n = parent.length;
    const children = new Array(n);
    const depth = new Int32Array(n);
    for (let i = 0; i < n; i++) children[i] = [];
    let maxDepth = 0;
    for (let i = 1; i < n; i++) {
      children[parent[i]].push(i);
      depth[i] = depth[parent[i]] + 1;
      if (depth[i] > maxDepth) maxDepth = depth[i];
    }
    for (const c of children) {
      if (c.length > 1) c.sort((a, b) => total[b] - total[a] || (names[name[a]] < names[name[b]] ? -1 : 1));
    }
    return {n, parent, name, kind, total, self, module, children, depth, maxDepth};
  }

  const main = makeTree(data.parent, data.name, data.kind, data.total, data.self, data.module);
  const rootTotal = main.total[0];
  const diff = data.diff;

  const KIND_HUE = {root: [0, 0], thread: [210, 8], python: [52, 75], operator: [24, 85], annotation: [275, 45],
                    runtime: [190, 55], native: [8, 75], kernel: [330, 55], other: [95, 35]};
  function kindColour(tree, f) {
    const [h, s] = KIND_HUE[data.kinds[tree.kind[f]]] || KIND_HUE.other;
    const l = 62 + Math.floor(hash(names[tree.name[f]]) * 20);
    return `hsl(${h + Math.floor(hash(names[tree.name[f]] + '#') * 12)}, ${s}%, ${l}%)`;
  }

  // Differential colouring (Brendan Gregg's differential flame graphs): the
  // change in a frame's share between the baseline and this trace; red grew,
  // blue shrank, white unchanged. Shares are of each trace's root total.
  let diffBy = 'self';
  let diffMax = {self: 0, total: 0};
  function diffDelta(f, by) {
    const now = (by === 'self' ? main.self[f] : main.total[f]) / (rootTotal || 1);
    const before = (by === 'self' ? diff.self[f] : diff.total[f]) / (diff.root_total || 1);
    return now - before;
  }
  if (diff) {
    for (const by of ['self', 'total']) {
      let m = 0;
      for (let f = 1; f < main.n; f++) m = Math.max(m, Math.abs(diffDelta(f, by)));
      diffMax[by] = m;
    }
  }
  function diffColour(f) {
    const d = diffDelta(f, diffBy);
    const m = diffMax[diffBy] || 1;
    const i = Math.min(1, Math.abs(d) / m);
    if (Math.abs(d) < 1e-12) return 'hsl(0, 0%, 96%)';
    return d > 0 ? `hsl(0, 85%, ${Math.round(96 - 46 * i)}%)` : `hsl(220, 85%, ${Math.round(96 - 46 * i)}%)`;
  }

  // Colour by module (--color-by module): each frame in the colour of its
  // innermost module frame (itself, or the nearest ancestor the writer
  // flagged in data.nn_module); grey without one. Main chart only.
  const modOf = data.nn_module ? new Int32Array(main.n).fill(-1) : null;
  let byModule = modOf !== null && !diff;
  const moduleLabel = (f) => names[main.name[f]].replace(/^nn\.Module: /, '');
  const moduleRank = [];  // [label, self ns] by self time, largest first
  if (modOf) {
    for (let f = 1; f < main.n; f++) modOf[f] = data.nn_module[f] ? f : modOf[main.parent[f]];
    const self = new Map();
    for (let f = 1; f < main.n; f++) {
      if (modOf[f] < 0) continue;
      const k = moduleLabel(modOf[f]);
      self.set(k, (self.get(k) || 0) + main.self[f]);
    }
    moduleRank.push(...[...self.entries()].sort((a, b) => b[1] - a[1]));
  }
  function moduleColour(label) {
    return `hsl(${Math.floor(hash(label) * 360)}, 62%, ${60 + Math.floor(hash(label + '#') * 14)}%)`;
  }
  function frameModuleColour(f) {
    return modOf[f] < 0 ? 'hsl(0, 0%, 82%)' : moduleColour(moduleLabel(modOf[f]));
  }

  let matchNames = null;  // Set of name indices matching the search, or null

  class FlameChart {
    constructor(el, tree, opts) {
      this.el = el;
      this.tree = tree;
      this.root = 0;
      this.flame = opts.flame;
      this.isMain = !!opts.isMain;
      this.onClick = opts.onClick;
      this.selected = -1;
      el.addEventListener('click', (e) => {
        const f = frameOf(e.target);
        if (f >= 0) this.onClick(f);
      });
      el.addEventListener('mousemove', (e) => {
        const f = frameOf(e.target);
        if (f >= 0) showTooltip(this, f, e); else hideTooltip();
      });
      el.addEventListener('mouseleave', hideTooltip);
      el.chart = this;
    }
    top(depth) {
      return (this.flame ? this.tree.maxDepth - depth : depth) * ROW;
    }
    colour(f) {
      if (this.isMain && diff) return diffColour(f);
      if (this.isMain && byModule) return frameModuleColour(f);
      return kindColour(this.tree, f);
    }
    addFrame(frag, f, x, w, cls) {
      const t = this.tree;
      const d = document.createElement('div');
      d.className = 'frame' + cls;
      if (matchNames && matchNames.has(t.name[f])) d.className += ' match';
      if (f === this.selected) d.className += ' selected';
      d.dataset.f = f;
      d.style.left = x.toFixed(2) + 'px';
      d.style.width = Math.max(w - 0.5, 0.5).toFixed(2) + 'px';
      d.style.top = this.top(t.depth[f]) + 'px';
      d.style.background = this.colour(f);
      d.textContent = names[t.name[f]];
      frag.appendChild(d);
    }
    render() {
      const t = this.tree, root = this.root;
      const width = this.el.clientWidth || 1000;
      this.el.style.height = (t.maxDepth + 1) * ROW + 'px';
      this.el.textContent = '';
      const frag = document.createDocumentFragment();
      for (let a = t.parent[root]; a >= 0; a = t.parent[a]) this.addFrame(frag, a, 0, width, ' ancestor');
      const scale = t.total[root] > 0 ? width / t.total[root] : 0;
      const stack = [root, 0];
      while (stack.length) {
        const x = stack.pop(), f = stack.pop();
        const w = f === root ? width : t.total[f] * scale;
        if (w < MIN_WIDTH_PX) continue;
        this.addFrame(frag, f, x, w, '');
        let cx = x;
        for (const c of t.children[f]) {
          stack.push(c, cx);
          cx += t.total[c] * scale;
        }
      }
      this.el.appendChild(frag);
    }
  }
  function frameOf(node) {
    while (node && node.classList && !node.classList.contains('frame')) node = node.parentNode;
    return node && node.dataset && node.dataset.f !== undefined ? Number(node.dataset.f) : -1;
  }

  // Tooltip: self and total time, their shares of all and of the zoomed frame.
  const tooltip = $('tooltip');
  function row(table, label, value) {
    const tr = table.insertRow();
    tr.insertCell().textContent = label;
    tr.insertCell().textContent = value;
  }
  function showTooltip(chart, f, e) {
    const t = chart.tree;
    tooltip.textContent = '';
    const title = document.createElement('div');
    title.className = 'name';
    title.textContent = names[t.name[f]];
    tooltip.appendChild(title);
    const table = document.createElement('table');
    const all = t.total[0] || 1, zoom = t.total[chart.root] || 1;
    row(table, 'total', `${fmtTime(t.total[f])}  (${pct(t.total[f] / all)} of all` +
        (chart.root !== 0 ? `, ${pct(t.total[f] / zoom)} of zoomed frame)` : ')'));
    row(table, 'self', `${fmtTime(t.self[f])}  (${pct(t.self[f] / all)} of all)`);
    if (t.parent[f] >= 0) row(table, 'of parent', pct(t.total[f] / (t.total[t.parent[f]] || 1)));
    if (chart.isMain && modOf) row(table, 'module', modOf[f] >= 0 ? moduleLabel(modOf[f]) : '(none)');
    row(table, 'kind', data.kinds[t.kind[f]] + (t.module && t.module[f] ? '  ' + names[t.module[f]] : ''));
    // A diff's frames carry their calls per steady step (both runs).
    if (chart.isMain && data.calls && f > 0) row(table, 'calls per step', fmtCalls(data.calls[f]));
    if (chart.isMain && diff) {
      const bt = diff.root_total || 1;
      row(table, 'baseline total', diff.matched[f] ? `${fmtTime(diff.total[f])}  (${pct(diff.total[f] / bt)})` : 'absent');
      row(table, 'baseline self', diff.matched[f] ? `${fmtTime(diff.self[f])}  (${pct(diff.self[f] / bt)})` : 'absent');
      if (diff.calls && f > 0) row(table, 'baseline calls per step', diff.matched[f] ? fmtCalls(diff.calls[f]) : 'absent');
      const ds = diffDelta(f, 'self'), dt = diffDelta(f, 'total');
      row(table, 'share change', `self ${ds >= 0 ? '+' : ''}${(100 * ds).toFixed(2)} pts, total ${dt >= 0 ? '+' : ''}${(100 * dt).toFixed(2)} pts`);
    }
    tooltip.appendChild(table);
    tooltip.style.display = 'block';
    const x = Math.min(e.clientX + 14, window.innerWidth - tooltip.offsetWidth - 4);
    const y = e.clientY + 18 + tooltip.offsetHeight > window.innerHeight ? e.clientY - tooltip.offsetHeight - 8 : e.clientY + 18;
    tooltip.style.left = Math.max(0, x) + 'px';
    tooltip.style.top = Math.max(0, y) + 'px';
  }
  function hideTooltip() { tooltip.style.display = 'none'; }

  // The main chart, zoom and breadcrumbs.
  const mainChart = new FlameChart($('flame'), main, {flame: true, isMain: true, onClick: zoomTo});
  function zoomTo(f) {
    mainChart.root = f;
    mainChart.selected = f;
    $('sandwich-btn').disabled = f === 0;
    $('sandwich-btn').textContent = f === 0 ? 'Sandwich (click a frame first)' : 'Sandwich: ' + truncate(names[main.name[f]], 40);
    renderCrumbs();
    mainChart.render();
    updateMatchInfo();
  }
  function truncate(s, n) { return s.length > n ? s.slice(0, n - 1) + '…' : s; }
  function renderCrumbs() {
    const crumbs = $('crumbs');
    crumbs.textContent = '';
    const path = [];
    for (let f = mainChart.root; f >= 0; f = main.parent[f]) path.push(f);
    path.reverse();
    path.forEach((f, i) => {
      if (i) crumbs.appendChild(document.createTextNode(' › '));
      const a = document.createElement('a');
      a.href = '#';
      a.textContent = names[main.name[f]];
      a.addEventListener('click', (e) => { e.preventDefault(); zoomTo(f); });
      crumbs.appendChild(a);
    });
  }

  // Search: names matching a substring or /regex/flags (both case-insensitive);
  // the share counts each matched frame once (nested matches not again).
  function compileQuery(q) {
    if (!q) return null;
    const m = /^\/(.*)\/([a-z]*)$/.exec(q);
    if (m) {  // without 'g'/'y': test() would keep state between names
      const flags = m[2].replace(/[gy]/g, '');
      return new RegExp(m[1], flags.includes('i') ? flags : flags + 'i');
    }
    const lower = q.toLowerCase();
    return {test: (s) => s.toLowerCase().includes(lower)};
  }
  function matchedTime(tree, from) {
    let sum = 0;
    const stack = [from];
    while (stack.length) {
      const f = stack.pop();
      if (matchNames.has(tree.name[f])) { sum += tree.total[f]; continue; }
      for (const c of tree.children[f]) stack.push(c);
    }
    return sum;
  }
  function updateMatchInfo() {
    const info = $('match-info');
    if (!matchNames) { info.textContent = ''; return; }
    const all = matchedTime(main, 0);
    let text = `Matched: ${pct(all / (rootTotal || 1))} of all (${fmtTime(all)}, ${matchNames.size} names)`;
    if (mainChart.root !== 0) {
      const z = matchedTime(main, mainChart.root);
      text += `; ${pct(z / (main.total[mainChart.root] || 1))} of the zoomed frame`;
    }
    info.textContent = text;
  }
  function search(q) {
    let re;
    try {
      re = compileQuery(q.trim());
    } catch (err) {
      $('match-info').textContent = 'invalid pattern';
      return;
    }
    if (re) {
      matchNames = new Set();
      names.forEach((s, i) => { if (i > 0 && re.test(s)) matchNames.add(i); });
    } else {
      matchNames = null;
    }
    updateMatchInfo();
    for (const c of charts()) c.render();
  }

  // Sandwich: the callers and the callees of one function, merged over all of
  // its outermost occurrences (a recursive call is not counted twice).
  function outermost(nameIdx) {
    const out = [];
    const stack = [0];
    while (stack.length) {
      const f = stack.pop();
      if (main.name[f] === nameIdx && f !== 0) { out.push(f); continue; }
      for (const c of main.children[f]) stack.push(c);
    }
    return out;
  }
  function builder() {
    const b = {parent: [-1], name: [0], kind: [0], total: [0], self: [0], module: [0], index: new Map()};
    b.child = (p, f) => {
      const key = p + ':' + main.name[f];
      let i = b.index.get(key);
      if (i === undefined) {
        i = b.parent.length;
        b.index.set(key, i);
        b.parent.push(p); b.name.push(main.name[f]); b.kind.push(main.kind[f]);
        b.total.push(0); b.self.push(0); b.module.push(main.module[f]);
      }
      return i;
    };
    return b;
  }
  function calleesTree(occ) {
    const b = builder();
    b.name[0] = main.name[occ[0]]; b.kind[0] = main.kind[occ[0]];
    const stack = [];
    for (const f of occ) { b.total[0] += main.total[f]; b.self[0] += main.self[f]; for (const c of main.children[f]) stack.push(c, 0); }
    while (stack.length) {
      const p = stack.pop(), f = stack.pop();
      const i = b.child(p, f);
      b.total[i] += main.total[f]; b.self[i] += main.self[f];
      for (const c of main.children[f]) stack.push(c, i);
    }
    return makeTree(b.parent, b.name, b.kind, b.total, b.self, b.module);
  }
  function callersTree(occ) {
    const b = builder();
    b.name[0] = main.name[occ[0]]; b.kind[0] = main.kind[occ[0]];
    for (const f of occ) {
      b.total[0] += main.total[f];
      let cur = 0;
      for (let a = main.parent[f]; a > 0; a = main.parent[a]) {
        cur = b.child(cur, a);
        b.total[cur] += main.total[f];
      }
    }
    for (let i = 0; i < b.total.length; i++) b.self[i] = b.total[i];
    for (let i = 1; i < b.total.length; i++) b.self[b.parent[i]] -= b.total[i];
    return makeTree(b.parent, b.name, b.kind, b.total, b.self, b.module);
  }
  let callersChart = null, calleesChart = null;
  function openSandwich() {
    const f = mainChart.selected;
    if (f <= 0) return;
    const occ = outermost(main.name[f]);
    $('sandwich-title').textContent = names[main.name[f]];
    const total = occ.reduce((s, o) => s + main.total[o], 0);
    $('sandwich-summary').textContent = `${occ.length} call paths, ${fmtTime(total)} (${pct(total / (rootTotal || 1))} of all)`;
    $('main-view').style.display = 'none';
    $('sandwich-view').style.display = 'block';
    callersChart = new FlameChart(fresh('callers'), callersTree(occ), {flame: true, onClick: (g) => { callersChart.root = g; callersChart.render(); }});
    calleesChart = new FlameChart(fresh('callees'), calleesTree(occ), {flame: false, onClick: (g) => { calleesChart.root = g; calleesChart.render(); }});
    callersChart.render();
    calleesChart.render();
  }
  function fresh(id) {  // a new element, so the old chart's listeners go with the old one
    const old = $(id), el = old.cloneNode(false);
    old.parentNode.replaceChild(el, old);
    return el;
  }
  function closeSandwich() {
    $('sandwich-view').style.display = 'none';
    $('main-view').style.display = 'block';
    callersChart = calleesChart = null;
    mainChart.render();
  }
  function charts() { return [mainChart, callersChart, calleesChart].filter((c) => c); }

  // Toolbar.
  $('search').addEventListener('input', (e) => search(e.target.value));
  $('reset').addEventListener('click', () => zoomTo(0));
  $('orient').addEventListener('click', () => {
    mainChart.flame = !mainChart.flame;
    $('orient').textContent = mainChart.flame ? 'Icicle' : 'Flame';
    mainChart.render();
  });
  $('sandwich-btn').addEventListener('click', openSandwich);
  $('sandwich-close').addEventListener('click', closeSandwich);
  if (diff) {
    $('diff-by').addEventListener('change', (e) => { diffBy = e.target.value; mainChart.render(); });
  }
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') { if (callersChart) closeSandwich(); else zoomTo(0); }
    if (e.key === '/' && document.activeElement !== $('search')) { e.preventDefault(); $('search').focus(); }
  });
  window.addEventListener('resize', () => { for (const c of charts()) c.render(); });

  // Summary line.
  const base = data.source === 'stack samples' ? 'the sample weights'
      : data.source === 'aligned diff nodes' ? "the aligned root's time" : 'the time of the top-level spans';
  let summary = `${fmtTime(rootTotal)} from ${data.source} (${data.events} ${data.event_noun}, ` +
      `${data.threads} thread${data.threads === 1 ? '' : 's'}); shares are of ${base} of the selected threads.`;
  if (data.outliving) summary += ` ${data.outliving} slices outlived the slice they started in and are kept whole under the slice that encloses them.`;
  if (diff) {
    summary += ` Differential against ${diff.title} (${fmtTime(diff.root_total)}): colour is the change in share, red grew, blue shrank.`;
    if (diff.missing_frames) summary += ` ${diff.missing_frames} baseline frames (${pct(diff.missing_ns / (diff.root_total || 1))} of its self time) have no counterpart here.`;
  }
  $('summary').textContent = summary;
  if (modOf && $('module-legend')) {
    const legend = $('module-legend'), btn = $('colorby');
    const fill = () => {
      legend.textContent = '';
      if (!byModule) return;
      const head = document.createElement('span');
      head.className = 'head';
      head.textContent = 'modules by self time (grey: none):';
      legend.appendChild(head);
      for (const [label, ns] of moduleRank.slice(0, 12)) {
        const s = document.createElement('span');
        s.className = 'mod';
        s.style.setProperty('--c', moduleColour(label));
        s.textContent = label + ' ' + fmtTime(ns);
        legend.appendChild(s);
      }
      if (moduleRank.length > 12) {
        const more = document.createElement('span');
        more.className = 'head';
        more.textContent = '+' + (moduleRank.length - 12) + ' more';
        legend.appendChild(more);
      }
    };
    const sync = () => { btn.textContent = 'Colour: ' + (byModule ? 'module' : 'kind'); btn.dataset.module = byModule ? '1' : '0'; fill(); };
    btn.addEventListener('click', () => { byModule = !byModule; sync(); mainChart.render(); });
    sync();
  }
  window.aiprofFlame = {data, main, mainChart, zoomTo, search, openSandwich, closeSandwich,
    modules: () => moduleRank.map(([label, ns]) => ({label, ns})), colorBy: () => (byModule ? 'module' : 'kind')};
  zoomTo(0);
})();
