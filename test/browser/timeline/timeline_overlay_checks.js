// Checks of the timeline's overlays (aiprof view --timeline --critical-path
// and/or --color-by module): the page is ready, the overlay is on at load,
// its toggle turns it off and on again and changes what is drawn, its legend
// says what it is, and nothing logs an error (check_page.js fails on any).
// The figures checked are the page's own embedded data (the model's unit
// tests check the data against hand-worked and session results).
'use strict';

module.exports = async (t) => {
  const {page, assert} = t;
  const pixels = () => page.evaluate(() => new Promise((ok) =>
    requestAnimationFrame(() => requestAnimationFrame(() => ok(document.getElementById('canvas').toDataURL())))));
  const state = await page.evaluate(() => ({
    path: !!window.aiprofTimeline.data.path, modules: !!window.aiprofTimeline.data.modules,
    device: window.aiprofTimeline.data.rows.some((r) => r.layer === 'device'),
  }));
  const window_hasDevice = state.device;
  assert.ok(state.path || state.modules, 'the page has no overlay data: run it with --critical-path or --color-by module');

  await t.check('page is ready', async () => {
    assert.equal(await page.evaluate(() => document.body.dataset.ready), '1');
  });

  if (state.path) {
    await t.check('the critical path is on at load: slices flagged, dependencies drawn, legend present', async () => {
      const cp = await page.evaluate(() => window.aiprofTimeline.criticalPath());
      assert.equal(cp.present, true);
      assert.equal(cp.on, true);
      assert.ok(cp.slices > 0, 'no slice on the path');
      // Dependencies between tracks: a GPU trace has launches and stream order; a
      // one-thread CPU trace's path stays on its thread (no arrow to draw).
      if (window_hasDevice) assert.ok(cp.edges > 0, 'no dependency');
      assert.equal(cp.edgesDrawn, cp.edges, 'the whole trace is in view: every dependency is drawn');
      const flagged = await page.evaluate(() => window.aiprofTimeline.data.rows.reduce(
        (n, r) => n + (r.cp ? r.cp.reduce((a, b) => a + b, 0) : 0), 0));
      assert.equal(flagged, cp.slices, 'every on-path slice of the data is flagged on its row');
      const legend = await page.$eval('#path-legend', (e) => e.textContent);
      assert.match(legend, /Critical path/);
      assert.match(legend, new RegExp(cp.slices + ' of \\d+ on-path slices'));
      assert.equal(await page.$eval('#cpath', (e) => e.dataset.on), '1');
    });

    await t.check('the toggle hides and shows the overlay', async () => {
      const on = await pixels();
      await page.click('#cpath');
      let cp = await page.evaluate(() => window.aiprofTimeline.criticalPath());
      assert.equal(cp.on, false);
      assert.equal(cp.edgesDrawn, 0);
      assert.equal(await page.$eval('#cpath', (e) => e.dataset.on), '0');
      const off = await pixels();
      assert.notEqual(off, on, 'turning the overlay off changed nothing drawn');
      await page.focus('#canvas');
      await page.keyboard.press('c');  // the key toggles it back
      cp = await page.evaluate(() => window.aiprofTimeline.criticalPath());
      assert.equal(cp.on, true);
      assert.equal(await pixels(), on, 'on again draws what it drew at load');
    });

    await t.check('a slice on the path says so in its details', async () => {
      const hit = await page.evaluate(() => {
        const D = window.aiprofTimeline.data;
        for (let r = 0; r < D.rows.length; r++) {
          const row = D.rows[r];
          if (!row.cp) continue;
          let best = -1;
          for (let i = 0; i < row.cp.length; i++) if (row.cp[i] && (best < 0 || row.dur[i] > row.dur[best])) best = i;
          if (best >= 0) return { label: row.label, ts: row.ts[best], dur: row.dur[best], d: row.d[best] };
        }
        return null;
      });
      assert.ok(hit);
      const lanes = await page.evaluate(() => window.aiprofTimeline.lanes());
      const lane = lanes.find((l) => l.type === 'slices' && l.label === hit.label);
      assert.ok(lane, 'lane of ' + hit.label);
      await page.evaluate(([a, b]) => window.aiprofTimeline.setView(a, b), [hit.ts - hit.dur * 0.05, hit.ts + hit.dur * 1.05]);
      const box = await (await page.$('#canvas')).boundingBox();
      const x = box.x + 280 + (box.width - 280) * (0.05 / 1.1 + 0.5 / 1.1);
      const y = box.y + 18 + lane.y + 2 + hit.d * 16 + 8;
      if (y < box.y + box.height) {
        await page.mouse.click(x, y);
        const details = await page.$eval('#details', (e) => e.textContent);
        assert.match(details, /critical path.*on a step's critical path/);
      }
      await page.evaluate(() => window.aiprofTimeline.setView(0, window.aiprofTimeline.data.span_ns));
    });
  }

  if (state.modules) {
    await t.check('colour by module: on at load, a legend of modules, the toggle changes the colours', async () => {
      assert.equal(await page.evaluate(() => window.aiprofTimeline.colorBy()), 'module');
      const legend = await page.$eval('#module-legend', (e) => e.textContent);
      assert.match(legend, /Colour by module/);
      const first = await page.evaluate(() => window.aiprofTimeline.data.modules.names[0]);
      if (first !== undefined) assert.ok(legend.includes(first), 'the largest module is in the legend');
      if (state.path) await page.click('#cpath');  // the path overlay dims everything else: off to compare colours
      const byModule = await pixels();
      await page.click('#colorby');
      assert.equal(await page.evaluate(() => window.aiprofTimeline.colorBy()), 'name');
      assert.notEqual(await pixels(), byModule);
      await page.click('#colorby');
      assert.equal(await pixels(), byModule);
      if (state.path) await page.click('#cpath');
    });
  }
};
