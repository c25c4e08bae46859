// Layout checks of a page rendered from a document (the report, diagnose,
// diff), at 1280 and 800 px: no text runs past the window (a mangled kernel
// name without spaces, a long path, a key/value list's long label), and, on
// the report, the headline says the step's time base once (the Step time
// card), the attribution tree's table is folded under the tree it repeats
// and keeps its indentation. Written for the MI300 ResNet trace of
// ../shared/fixtures/tracelens (AMD's CK kernel names, the device running
// behind the host) and the ResNet50 pair's diff (trial_views2 V1-V4).
'use strict';

async function overflow(page) {
  return page.evaluate(() => {
    const vw = document.documentElement.clientWidth;
    const out = [];
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const el = n.parentElement;
      if (!el || el.closest('div.table') || !n.textContent.trim()) continue;  // a wide table scrolls in its box
      const range = document.createRange();
      range.selectNodeContents(n);
      const r = range.getBoundingClientRect();
      if (r.width > 0 && r.right > vw + 1) {
        out.push(`${el.tagName.toLowerCase()}.${el.className} to ${Math.round(r.right)} px: ${n.textContent.slice(0, 60)}`);
      }
    }
    return {page: document.documentElement.scrollWidth, view: vw, out: out.slice(0, 5)};
  });
}

module.exports = async (t) => {
  const {page, assert} = t;
  if (process.env.AIPROF_LAYOUT_TITLE_NAMES_VERDICT) {  // validate: its title is the verdict, its runs are listed
    await t.check('the title names the verdict', async () => {
      assert.match(await page.title(), /aiprof validate: /);
    });
  } else {
    await t.check('the title and heading name the input trace', async () => {
      const r = await page.evaluate(() => ({title: document.title, h1: document.querySelector('h1').textContent}));
      assert.match(r.title, /\.json(\.gz)?/, 'the title names no trace');
      assert.match(r.h1, /\.json(\.gz)?/, 'the heading names no trace');
    });
  }
  for (const width of [1280, 800]) {
    await page.setViewportSize({width, height: 900});
    await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; }));
    await t.check(`at ${width} px no text runs past the window`, async () => {
      const r = await overflow(page);
      assert.deepEqual(r.out, [], `text past the ${r.view}-px window`);
      assert.ok(r.page <= r.view, `the page is ${r.page} px wide in a ${r.view}-px window`);
    });
    await t.check(`at ${width} px no table cell of prose is squeezed to a few words a line`, async () => {
      // validate's "why" beside a dozen figures got 60 px, 8 lines a row
      // (Column::html_below now shows it under its row).
      const squeezed = await page.evaluate(() => Array.from(document.querySelectorAll('td')).filter((td) => {
        const text = td.textContent.trim();
        if (text.length < 40 || !/\s/.test(text) || td.closest('details:not([open])')) return false;
        const lines = td.getBoundingClientRect().height / (parseFloat(getComputedStyle(td).lineHeight) || 18);
        return td.getBoundingClientRect().width < 140 && lines > 5;
      }).slice(0, 5).map((td) => `${Math.round(td.getBoundingClientRect().width)} px: ${td.textContent.slice(0, 60)}`));
      assert.deepEqual(squeezed, [], 'prose cells squeezed');
    });
    await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = false; }));
  }
  const isReport = await page.$('#headline');
  if (!isReport) return;

  await t.check('the headline states the step base once: the Top bottleneck card does not repeat it', async () => {
    const cards = await page.$$eval('#headline .card', (els) =>
      Object.fromEntries(els.map((e) => [e.dataset.key, e.querySelector('.s').textContent])));
    assert.ok(cards.step_time && cards.top_bottleneck, 'no Step time or Top bottleneck card');
    assert.match(cards.step_time, /runs behind the host/, 'the Step time card does not state the base');
    assert.doesNotMatch(cards.top_bottleneck, /runs behind the host|steady-state step|\[per step/,
                        'the Top bottleneck card repeats the step base');
    assert.ok(cards.top_bottleneck.length < 400, `Top bottleneck card: ${cards.top_bottleneck.length} characters`);
  });

  await t.check('the timeline keys the idle causes in the report charts\' colours', async () => {
    const rgb = (c) => { const d = document.createElement('div'); d.style.color = c; document.body.appendChild(d);
      const v = getComputedStyle(d).color; d.remove(); return v; };
    const chart = await page.evaluate(`(() => { const rgb = ${rgb.toString()}; const out = {};
      document.querySelectorAll('svg.chart text').forEach((t) => {
        const m = /^idle: (\\w+)$/.exec(t.textContent); const r = t.previousElementSibling;
        if (m && r && r.tagName === 'rect') out[m[1]] = rgb(r.getAttribute('fill')); });
      return out; })()`);
    const handle = await page.$('iframe[title="Timeline overview"]');
    assert.ok(handle, 'no embedded timeline');
    const frame = await handle.contentFrame();
    await frame.waitForSelector('#legend .sw', {timeout: 10000});
    const timeline = await frame.evaluate(() => {
      const out = {};
      document.querySelectorAll('#legend .sw').forEach((sw) => {
        const m = /^gap: (\w+)$/.exec((sw.nextSibling && sw.nextSibling.textContent) || '');
        if (m) out[m[1]] = getComputedStyle(sw).backgroundColor;
      });
      return out;
    });
    assert.ok(Object.keys(chart).length >= 4, `chart legend: ${JSON.stringify(chart)}`);
    assert.deepEqual(timeline, chart, 'gap colours: timeline vs report charts');
  });

  await t.check('the embedded timeline leaves its tracks most of its frame', async () => {
    await page.setViewportSize({width: 1280, height: 900});
    const frame = await (await page.$('iframe[title="Timeline overview"]')).contentFrame();
    const tracks = await frame.$eval('#main', (e) => e.getBoundingClientRect().height);
    assert.ok(tracks >= 400, `the tracks get ${tracks} px of the frame (its panel and bar take the rest)`);
  });

  await t.check('the diagnosis states the impacts\' base once', async () => {
    const r = await page.$eval('#diagnosis', (e) => {
      const dt = Array.from(e.querySelectorAll('dt')).find((d) => d.textContent === 'Impacts');
      const base = dt ? dt.nextElementSibling.textContent.replace(/^wall-clock time /, '') : '';
      return {base, n: base ? e.textContent.split(base).length - 1 : 0};
    });
    assert.ok(r.base.length > 40, `no Impacts line with its base: '${r.base}'`);
    assert.equal(r.n, 1, `the base '${r.base}' appears ${r.n} times (the Impacts line and each finding)`);
  });

  await t.check('the attribution tree\'s table is folded under the tree and keeps its indentation', async () => {
    const r = await page.evaluate(() => {
      const table = document.querySelector('table[data-key="tree"]');
      if (!table) return null;
      const fold = table.closest('details');
      if (fold) fold.open = true;
      const rows = Array.from(table.tBodies[0].rows);
      const deep = rows.find((row) => /^ {4}\S/.test(row.cells[0].textContent));
      const top = rows[0];
      // the glyphs of a depth-2 row start right of the root's
      const shift = deep ? (() => {
        const s = window.getComputedStyle(deep.cells[0]).whiteSpace;
        const r = document.createRange();
        const node = deep.cells[0].firstChild;
        const lead = deep.cells[0].textContent.search(/\S/);
        r.setStart(node, lead);
        r.setEnd(node, lead + 1);
        const r0 = document.createRange();
        r0.setStart(top.cells[0].firstChild, 0);
        r0.setEnd(top.cells[0].firstChild, 1);
        return {ws: s, dx: r.getBoundingClientRect().left - r0.getBoundingClientRect().left};
      })() : null;
      return {folded: !!fold && fold.querySelector('summary') !== null, shift};
    });
    assert.ok(r, 'no attribution-tree table');
    assert.ok(r.folded, 'the table is not folded under a summary');
    assert.ok(r.shift, 'no row at depth 2');
    assert.ok(r.shift.dx >= 10, `a depth-2 row starts ${r.shift.dx} px right of the root (white-space ${r.shift.ws})`);
  });

  await t.check('printed (report -o x.pdf), the tree\'s table shows every row in place of the tree', async () => {
    await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = false; }));
    await page.emulateMedia({media: 'print'});
    const r = await page.evaluate(() => {
      const rows = Array.from(document.querySelectorAll('table[data-key="tree"] tbody tr'));
      const tree = document.querySelector('div.attribution-tree');
      return {rows: rows.length, shown: rows.filter((tr) => tr.getBoundingClientRect().height > 0).length,
              tree: tree ? tree.getBoundingClientRect().height : 0};
    });
    await page.emulateMedia({media: 'screen'});
    assert.ok(r.rows > 10, `${r.rows} rows`);
    assert.equal(r.shown, r.rows, 'rows of the folded table not printed');
    assert.equal(r.tree, 0, 'the tree (its closed nodes do not print) is printed beside the table');
  });
};
