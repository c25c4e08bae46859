// Browser checks of `aiprof report -o analysis.html` on the shipped ResNet50
// num_workers=0 trace (opts.hostile: the hand-made hostile-names trace).
'use strict';

async function run(t, opts = {}) {
  const {page, assert} = t;
  if (!opts.hostile) await t.screenshot('report_resnet50.png');  // the top of the page, as a reader first sees it
  await t.check('headline, charts and sections are there', async () => {
    const cards = await page.$$eval('#headline .card', (els) => els.map((e) => e.textContent));
    assert.ok(cards.length >= 3, `${cards.length} headline cards`);
    const charts = await page.$$eval('svg.chart', (els) => els.length);
    assert.ok(charts >= (opts.hostile ? 1 : 4), `${charts} charts`);
    for (const id of ['#charts', '#ops', '#diagnosis', '#evidence']) {
      assert.ok(await page.$(id), `no ${id}`);
    }
    if (!opts.hostile) {
      assert.match(cards.join(' '), /The step waits for input data/);
    }
  });

  await t.check('clicking a column sorts the top-ops table', async () => {
    const counts = () => page.$$eval('table[data-key="top_ops"] tbody tr', (rows) => rows.map((r) => Number(r.cells[2].dataset.v)));
    await page.click('table[data-key="top_ops"] thead th:nth-child(3)');
    const asc = await counts();
    assert.deepEqual(asc, [...asc].sort((a, b) => a - b), 'not ascending after one click');
    await page.click('table[data-key="top_ops"] thead th:nth-child(3)');
    const desc = await counts();
    assert.deepEqual(desc, [...desc].sort((a, b) => b - a), 'not descending after two clicks');
    assert.ok(desc.length > 0);
  });

  if (!opts.hostile) {
    await t.check('the embedded flame graph draws its frames', async () => {
      const handle = await page.$('iframe[title="Flame graph"]');
      assert.ok(handle, 'no embedded flame graph');
      const frame = await handle.contentFrame();
      await frame.waitForSelector('#flame .frame', {timeout: 10000});
      const n = await frame.$$eval('#flame .frame', (els) => els.length);
      assert.ok(n > 5, `${n} frames`);
    });
    await t.check('the embedded timeline overview draws its tracks', async () => {
      const handle = await page.$('iframe[title="Timeline overview"]');
      assert.ok(handle, 'no embedded timeline');
      const frame = await handle.contentFrame();
      await frame.waitForSelector('canvas', {timeout: 10000});
      const canvases = await frame.$$eval('canvas', (els) => els.filter((c) => c.width > 0 && c.height > 0).length);
      assert.ok(canvases > 0, 'no drawn canvas');
    });
  } else {
    await t.check('hostile names stay text', async () => {
      const imgs = await page.$$eval('img', (els) => els.length);
      assert.equal(imgs, 0, 'an <img> was injected');
      const text = await page.$eval('table[data-key="top_ops"]', (e) => e.textContent);
      assert.ok(text.includes('</script><img src=x onerror=alert(1)>'), 'the hostile op name is not shown as text');
    });
  }
}

module.exports = (t) => run(t, {});
module.exports.run = run;
