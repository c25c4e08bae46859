// Checks of the timeline's instants on a real `aiprof trace` capture
// (make_fault_page.py: page_fault_churn.py's minor page faults). Expected
// figures come from faults_expected_<variant>.json beside the page: the fault
// records as `aiprof export --format chrome-json` writes them, and the
// program's own getrusage counts per step; not from the page's data.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const {LABEL_W, parseDuration} = require('./timeline_test_util.js');

module.exports = async (t) => {
  const {page, assert} = t;
  const htmlPath = decodeURIComponent(new URL(page.url()).pathname);
  const dir = path.dirname(htmlPath);
  const X = JSON.parse(fs.readFileSync(path.join(dir, `faults_expected_${path.basename(htmlPath, '.html')}.json`), 'utf8'));
  const variant = X.variant;
  const binned = variant === 'binned';
  const info = await page.evaluate(() => {
    const D = window.aiprofTimeline.data;
    return {origin: D.origin_ns, span: D.span_ns, I: {total: D.instants.total, binned: D.instants.binned, levels: D.instants.levels,
      period: D.instants.fault_period, cost: D.instants.fault_cost_ns, kinds: D.instants.kinds}};
  });
  const origin = Number(BigInt(info.origin));
  const rel = X.records.map((r) => r[1] - origin).sort((a, b) => a - b);
  const period = X.meta['capture.page_faults.period'] ? Number(X.meta['capture.page_faults.period']) : 1;
  const cost = X.meta['capture.page_fault_cost_ns'] ? Number(X.meta['capture.page_fault_cost_ns']) : null;
  const countIn = (lo, hi, inclusiveHi) => rel.filter((v) => v >= lo && (inclusiveHi ? v <= hi : v < hi)).length;

  await t.check('the page holds every fault record, the period and the cost of the capture', async () => {
    assert.equal(await page.evaluate(() => document.body.dataset.ready), '1');
    assert.ok(X.records.length > 1000, `only ${X.records.length} fault records in the capture`);
    assert.equal(info.I.total, X.records.length + X.hostile.length);
    const fault = info.I.kinds.filter((k) => k.fault === 1);
    assert.equal(fault.length, 1);
    assert.equal(fault[0].total, X.records.length);
    assert.equal(fault[0].name, 'minor page fault');
    assert.equal(info.I.period, period);
    assert.equal(info.I.cost, cost);
    assert.equal(info.I.binned, binned ? 1 : 0);
    const st = await page.evaluate(() => window.aiprofTimeline.instants());
    assert.ok(st.present && st.strips >= 1 && st.columnsDrawn > 0, JSON.stringify(st));
    const legend = await page.$eval('#instant-legend', (e) => e.textContent);
    assert.ok(legend.includes(String(X.records.length) + ' minor page fault records'), legend);
    assert.ok(cost === null ? legend.includes('no measured cost') : legend.includes('an estimate'), legend);
  });

  await t.check('each step\'s fault records, selected on the page, match the capture (and the kernel\'s count)', async () => {
    const w = binned ? info.I.levels[info.I.levels.length - 1] : 0;
    let compared = 0;
    for (const [n, minflt, t0, t1] of X.program) {
      const a = t0 - origin, b = t1 - origin;
      const got = await page.evaluate(([a, b]) => window.aiprofTimeline.select(a, b, 0, 1e9), [a, b]);
      // Full detail: exact; binned: the bins wholly inside [a, b], i.e. the records in [w*ceil(a/w), w*floor(b/w)).
      const want = binned ? countIn(w * Math.ceil(a / w), w * Math.floor(b / w), false) : countIn(a, b, true);
      assert.equal(got.faultRecords, want, `step ${n}: ${got.faultRecords} records on the page, ${want} in the capture`);
      assert.equal(await page.$eval('#selection', (e) => e.dataset.faultRecords), String(want));
      if (!binned && X.meta['capture.page_faults.kernel'] === 'recorded' && n > 1) {
        // perf's records vs getrusage: the same minor faults (tolerance of test/e2e/page_faults_e2e_test.py).
        const faults = got.faultRecords * period;
        assert.ok(Math.abs(faults - minflt) <= Math.max(16, 0.02 * minflt), `step ${n}: ${faults} faults on the page, getrusage ${minflt}`);
      }
      compared++;
    }
    assert.ok(compared >= 5);
    const text = await page.$eval('#selection-instants', (e) => e.textContent);
    assert.ok(text.includes('page fault records'), text);
    assert.ok(cost === null ? text.includes('unknown') : text.includes('estimated fault time: ≈') && text.includes('(estimate:'), text);
  });

  await t.check('the fault strip is drawn in its colour, and hovering it gives the count and the estimated time', async () => {
    await page.keyboard.press('0');
    const box = await (await page.$('#canvas')).boundingBox();
    let strip = null;
    for (let k = 0; k < 40; k++) {
      const strips = await page.evaluate(() => window.aiprofTimeline.strips());
      strip = strips.filter((s) => s.fault).sort((a, b) => b.total - a.total)[0];
      if (strip.y + strip.h < box.height - 10) break;
      await page.focus('#canvas');
      await page.keyboard.press('ArrowDown');
      await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));
    }
    assert.ok(strip.y >= 18 && strip.y + strip.h < box.height, `strip at ${strip.y} not on screen`);
    const cols = await page.evaluate(([y, x0]) => {
      const c = document.getElementById('canvas'), dpr = c.width / c.getBoundingClientRect().width;
      const img = c.getContext('2d').getImageData(0, Math.round((y + 3) * dpr), c.width, 1).data;
      const out = [];
      for (let x = Math.ceil(x0 * dpr); x < c.width; x++) {
        const r = img[4 * x], g = img[4 * x + 1], b = img[4 * x + 2];
        if (r > 150 && g < 140 && b > 60 && r > b + 30) out.push(x / dpr);  // magenta over white
      }
      return out;
    }, [strip.y, LABEL_W]);
    assert.ok(cols.length > 20, `${cols.length} magenta pixel columns in the fault strip`);
    const x = cols[Math.floor(cols.length / 2)];
    await page.mouse.move(box.x + x + 0.5, box.y + strip.y + 3);
    const tip = await page.$eval('#tip', (e) => (e.style.display === 'block' ? e.textContent : ''));
    const line = (label) => (tip.split('\n').find((l) => l.startsWith(label + ': ')) || '').slice(label.length + 2);
    const records = Number(line('page fault records'));
    assert.ok(records >= 1, tip);
    assert.ok(line('page faults').startsWith(String(records * period)), tip);
    const est = line('estimated fault time');
    if (cost === null) {
      assert.ok(est.startsWith('unknown'), tip);
    } else {
      const ns = parseDuration(est);
      assert.ok(ns !== null && Math.abs(ns - records * period * cost) <= 0.005 * records * period * cost + 10, `${est} vs ${records * period * cost} ns`);
      assert.ok(est.includes('estimate'), tip);
    }
    await t.screenshot(`timeline_faults_${variant}_hover.png`);
  });

  await t.check('a shift+drag selection counts the records in its range', async () => {
    const box = await (await page.$('#canvas')).boundingBox();
    await page.keyboard.press('0');
    await page.keyboard.down('Shift');
    await page.mouse.move(box.x + LABEL_W + 200, box.y + 25);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width - 200, box.y + box.height - 5, {steps: 6});
    await page.mouse.up();
    await page.keyboard.up('Shift');
    const ds = await page.$eval('#selection', (e) => ({t0: Number(e.dataset.t0), t1: Number(e.dataset.t1), n: Number(e.dataset.faultRecords)}));
    const w = binned ? info.I.levels[info.I.levels.length - 1] : 0;
    const want = binned ? countIn(w * Math.ceil(ds.t0 / w), w * Math.floor(ds.t1 / w), false) : countIn(ds.t0, ds.t1, true);
    assert.equal(ds.n, want);
    assert.ok(want > 0);
  });

  await t.check('instant names stay text', async () => {
    assert.equal(await page.evaluate(() => document.querySelectorAll('img, svg, iframe').length), 0);
    if (!X.hostile.length) return;
    const w = info.I.levels.length ? info.I.levels[info.I.levels.length - 1] : 1;
    const got = await page.evaluate(([a, b]) => window.aiprofTimeline.select(a, b, 0, 1e9), [-w, info.span + w]);
    assert.equal(got.instants, X.records.length + X.hostile.length);
    assert.equal(got.faultRecords, X.records.length);
    const text = await page.$eval('#selection-instants', (e) => e.textContent);
    assert.ok(text.includes(X.hostile_name + ' (<b>' + X.hostile_name + '</b>) ' + X.hostile.length), text);
  });
};
