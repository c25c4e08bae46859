// Checks of `aiprof view --flame --color-by module` on a CPU trace with
// nn.Module frames: the frames are coloured by module at load, the legend
// lists the modules by self time (the page's own sums of its frames' self
// time by innermost module, recomputed here from the embedded data), the
// tooltip names a frame's module, and the toggle switches to kind colours.
'use strict';

module.exports = async (t) => {
  const {page, assert} = t;
  await t.check('module flags are embedded and the legend ranks modules by self time', async () => {
    const r = await page.evaluate(() => {
      const d = window.aiprofFlame.data, m = window.aiprofFlame.main;
      const mod = new Int32Array(m.n).fill(-1), self = new Map();
      for (let f = 1; f < m.n; f++) mod[f] = d.nn_module[f] ? f : mod[m.parent[f]];
      for (let f = 1; f < m.n; f++) {
        if (mod[f] < 0) continue;
        const k = d.names[m.name[mod[f]]].replace(/^nn\.Module: /, '');
        self.set(k, (self.get(k) || 0) + m.self[f]);
      }
      const want = [...self.entries()].sort((a, b) => b[1] - a[1]);
      return { want, got: window.aiprofFlame.modules().map((x) => [x.label, x.ns]), flagged: d.nn_module.reduce((a, b) => a + b, 0) };
    });
    assert.ok(r.flagged > 0, 'no module frame');
    assert.deepEqual(r.got, r.want);
    const legend = await page.$eval('#module-legend', (e) => e.textContent);
    assert.ok(legend.includes(r.want[0][0]), 'the largest module is in the legend');
    assert.equal(await page.evaluate(() => window.aiprofFlame.colorBy()), 'module');
  });

  await t.check('a frame under a module names it in the tooltip', async () => {
    const f = await page.evaluate(() => {
      const d = window.aiprofFlame.data, m = window.aiprofFlame.main;
      let best = -1;
      for (let i = 1; i < m.n; i++) if (d.nn_module[i] && (best < 0 || m.total[i] > m.total[best])) best = i;
      return best;
    });
    await page.hover(`#flame .frame[data-f="${f}"]`);
    const tip = await page.$eval('#tooltip', (e) => e.textContent);
    assert.match(tip, /module/);
  });

  await t.check('the toggle switches between module and kind colours', async () => {
    const colours = () => page.$$eval('#flame .frame', (els) => els.slice(0, 200).map((e) => e.style.background).join('|'));
    const byModule = await colours();
    await page.click('#colorby');
    assert.equal(await page.evaluate(() => window.aiprofFlame.colorBy()), 'kind');
    assert.notEqual(await colours(), byModule);
    assert.equal(await page.$eval('#module-legend', (e) => e.textContent), '');
    await page.click('#colorby');
    assert.equal(await colours(), byModule);
  });
};
