// Checks of `aiprof view --timeline` on a real trace (the shipped AlexNet
// Kineto trace) and on the shared hostile-names trace: the page draws with no
// error, has its lanes, and search, zoom and a selection change what is shown.
// Expected counts come from the page's own embedded data only where noted.
'use strict';
const fs = require('node:fs');

const LABEL_W = 280;

module.exports = async (t) => {
  const {page, assert} = t;
  const pixels = () => page.evaluate(() => new Promise((ok) =>
    requestAnimationFrame(() => requestAnimationFrame(() => ok(document.getElementById('canvas').toDataURL())))));
  const box = await (await page.$('#canvas')).boundingBox();
  const lanes = await page.evaluate(() => window.aiprofTimeline.lanes());
  const data = await page.evaluate(() => {
    const D = window.aiprofTimeline.data;
    return {names: D.names, counts: D.counts, gaps: D.gaps.length, markers: D.markers.length, rows: D.rows.length};
  });

  await t.check('page is ready with lanes for every row', async () => {
    assert.equal(await page.evaluate(() => document.body.dataset.ready), '1');
    assert.equal(lanes.filter((l) => l.type === 'slices' || l.type === 'counter').length, data.rows);
    assert.ok(data.rows > 0);
  });

  await t.check('no trace text became markup', async () => {
    assert.equal(await page.evaluate(() => document.querySelectorAll('img, svg, iframe').length), 0);
    // Every lane label is drawn on the canvas; the DOM holds only the page's own elements.
    const tags = await page.evaluate(() => [...document.body.querySelectorAll('*')].map((e) => e.tagName));
    for (const tag of tags) assert.ok(['DIV', 'B', 'SPAN', 'INPUT', 'BUTTON', 'CANVAS', 'SCRIPT', 'H3', 'TABLE', 'TR', 'TD', 'TH', 'TBODY'].includes(tag), tag);
  });

  await t.check('instant names stay text', async () => {
    const I = await page.evaluate(() => window.aiprofTimeline.data.instants || null);
    if (!I) return;  // a trace without instants (the AlexNet trace has only global ones, counted in the legend)
    const got = await page.evaluate(() => window.aiprofTimeline.select(-1e18, 1e18, 0, 1e9));
    assert.equal(got.instants, I.total);
    if (!I.total) return;
    const text = await page.$eval('#selection-instants', (e) => e.textContent);
    for (const k of I.kinds) if (!k.fault) assert.ok(text.includes(k.name + ' (' + k.cat + ') ' + k.total), text);
    assert.equal(await page.evaluate(() => document.querySelectorAll('img, svg, iframe').length), 0);
  });

  await t.check('search counts every slice of the matching names', async () => {
    const q = data.names.find((n) => n.length > 3) || data.names[0];
    const expected = await page.evaluate((q) => {
      const D = window.aiprofTimeline.data;
      let n = 0;
      D.names.forEach((name, i) => { if (name.toLowerCase().includes(q.toLowerCase())) n += D.name_count[i]; });
      return n;
    }, q);
    const before = await pixels();
    await page.type('#search', q);
    assert.equal(await page.$eval('#search-count', (e) => e.dataset.count), String(expected));
    assert.ok(expected > 0);
    assert.notEqual(await pixels(), before);
    await page.click('#search', {clickCount: 3});
    await page.keyboard.press('Backspace');
  });

  await t.check('zoom and keyboard change the view', async () => {
    const range = () => page.$eval('#range', (e) => Number(e.dataset.end) - Number(e.dataset.start));
    const w0 = await range(), p0 = await pixels();
    await page.mouse.move(box.x + LABEL_W + (box.width - LABEL_W) * 0.7, box.y + box.height / 2);
    await page.mouse.wheel(0, -600);
    assert.ok(await range() < w0 * 0.5);
    assert.notEqual(await pixels(), p0);
    await page.focus('#canvas');
    const w1 = await range();
    await page.keyboard.press('s');
    assert.ok(await range() > w1);
    await page.keyboard.press('0');
  });

  await t.check('a selection over all lanes shows totals', async () => {
    await page.keyboard.down('Shift');
    await page.mouse.move(box.x + LABEL_W + 5, box.y + 25);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width - 5, box.y + box.height - 5, {steps: 6});
    await page.mouse.up();
    await page.keyboard.up('Shift');
    const count = await page.$eval('#selection', (e) => e.dataset.count);
    assert.ok(Number(count) > 0, 'selection counted nothing');
    await t.screenshot(`timeline_${data.rows}_rows_selection.png`);
  });

  // The selection's counts and times stay inside their panel however long
  // the names (trial_views2 V10: the time column sat right of the panel's
  // edge at 1280 px, the name column 46ch wide), at 1280 and 800 px.
  for (const width of [1280, 800]) {
    await t.check(`at ${width} px the selection's count and time columns are inside the panel`, async () => {
      await page.setViewportSize({width, height: 800});
      await page.evaluate(() => window.aiprofTimeline.select(-1e18, 1e18, 0, 1e9));
      const r = await page.$eval('#selection', (el) => {
        const right = el.getBoundingClientRect().right;
        const rows = Array.from(el.querySelectorAll('tr'));
        return {right, over: rows.map((tr) => Array.from(tr.cells).slice(1).map((c) => c.getBoundingClientRect().right))
          .flat().filter((x) => x > right + 1).length, rows: rows.length};
      });
      assert.ok(r.rows > 1, 'no selection table');
      assert.equal(r.over, 0, `${r.over} count/time cells end right of the panel (${r.right} px)`);
    });
  }
};
