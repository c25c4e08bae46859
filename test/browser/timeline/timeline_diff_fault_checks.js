// Checks of `aiprof diff A B --timeline` on two real captures with page
// fault records (make_diff_fault_page.py). Expected figures come from
// diff_faults_expected_<page>.json beside the page: per step of each
// capture, its fault records by `aiprof query` over the capture's instants,
// and each capture's period and cost; not from the page's data.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const {LABEL_W, parseDuration} = require('./timeline_test_util.js');

module.exports = async (t) => {
  const {page, assert} = t;
  const htmlPath = decodeURIComponent(new URL(page.url()).pathname);
  const X = JSON.parse(fs.readFileSync(path.join(path.dirname(htmlPath),
    `diff_faults_expected_${path.basename(htmlPath, '.html')}.json`), 'utf8'));
  const info = await page.evaluate(() => {
    const D = window.aiprofTimeline.data;
    return {I: D.instants, steps: D.steps.rank.map((r, i) => ({rank: r, name: D.names[D.steps.n[i]], ts: D.steps.ts[i], dur: D.steps.dur[i]})),
      note: D.note || ''};
  });
  // Run A is rank 1, run B rank 2 (one rank each); their steps are named "A: ProfilerStep#N".
  const runs = [{side: 'a', label: 'A', rank: 1}, {side: 'b', label: 'B', rank: 2}];

  await t.check('each run\'s fault records carry its own capture\'s period and cost', async () => {
    assert.equal(await page.evaluate(() => document.body.dataset.ready), '1');
    const S = info.I.fault_sources;
    assert.ok(Array.isArray(S) && S.length === 2, JSON.stringify(S));
    for (const [k, r] of runs.entries()) {
      assert.equal(S[k].label, r.label);
      assert.equal(S[k].fault_period, X[r.side].period);
      assert.equal(S[k].fault_cost_ns, X[r.side].cost);
      const kinds = info.I.kinds.filter((kd) => kd.fault === 1 && kd.src === k);
      assert.equal(kinds.length, 1, JSON.stringify(info.I.kinds));
    }
    if (!X.hostile) assert.notEqual(X.a.period, X.b.period, 'the fixtures differ in period (1 and 4)');
    const legend = await page.$eval('#instant-legend', (e) => e.textContent);
    for (const r of runs) assert.ok(legend.includes(r.label + ': '), legend);
    assert.ok(info.note.includes('Thread instants in the steps are drawn'), info.note);
  });

  await t.check('per aligned step, each run\'s faults on the page equal `aiprof query` over its capture', async () => {
    let compared = 0;
    for (const r of runs) {
      const byNumber = new Map(X[r.side].steps.map((s) => [s.number, s]));
      const mine = info.steps.filter((s) => s.rank === r.rank);
      assert.ok(mine.length >= 10, `${mine.length} steps of run ${r.label} on the page`);
      let pageRecords = 0;
      for (const s of mine) {
        const m = /ProfilerStep#(\d+)$/.exec(s.name);
        assert.ok(m, s.name);
        const want = byNumber.get(Number(m[1]));
        assert.ok(want, `step ${s.name} not in the capture`);
        assert.equal(s.dur, want.dur, s.name);
        const rows = await page.evaluate(([a, b]) => window.aiprofTimeline.instantsIn(a, b), [s.ts, s.ts + s.dur - 0.5]);
        let records = 0, faults = 0;
        for (const row of rows) {
          if (row.rank === r.rank) {
            records += row.faultRecords;
            faults += row.faults;
            if (row.faultRecords) assert.equal(row.source, r.label);
          }
        }
        assert.equal(records, want.records, `${s.name}: ${records} records on the page, ${want.records} in the capture`);
        assert.equal(faults, want.records * X[r.side].period, s.name);
        assert.ok(records > 100, `${s.name}: only ${records} fault records`);
        pageRecords += records;
        compared++;
      }
      const k = runs.indexOf(r);
      const kindTotal = info.I.kinds.filter((kd) => kd.fault === 1 && kd.src === k).reduce((a, kd) => a + kd.total, 0);
      assert.equal(kindTotal, pageRecords, `run ${r.label}: the page holds fault records outside its steps`);
    }
    assert.ok(compared >= 20);
  });

  await t.check('hovering each run\'s fault strip gives its faults and estimate with its own period and cost', async () => {
    const s = info.steps.find((x) => x.rank === 1);
    await page.evaluate(([a, b]) => window.aiprofTimeline.setView(a, b), [s.ts, s.ts + s.dur]);
    for (const [k, r] of runs.entries()) {
      const strips = await page.evaluate(() => window.aiprofTimeline.strips());
      const strip = strips.filter((x) => x.fault && x.label.startsWith(r.label + ':')).sort((a, b) => b.total - a.total)[0];
      assert.ok(strip, `no fault strip of run ${r.label}: ` + JSON.stringify(strips.map((x) => x.label)));
      let tip = null;
      for (let x = LABEL_W + 2; x < 1200 && !tip; x += 3) {
        const d = await page.evaluate(([x, y]) => window.aiprofTimeline.describeAt(x, y), [x, strip.y + 2]);
        if (d && d.some((p) => p[0] === 'page faults (' + r.label + ')')) tip = d;
      }
      assert.ok(tip, `no hover with faults of run ${r.label}`);
      const line = (label) => (tip.find((p) => p[0] === label) || [null, ''])[1];
      const records = Number(line('page fault records'));
      const period = X[r.side].period, cost = X[r.side].cost;
      assert.ok(records >= 1, JSON.stringify(tip));
      assert.ok(line('page faults (' + r.label + ')').startsWith(String(records * period)), JSON.stringify(tip));
      if (period > 1) assert.ok(line('page faults (' + r.label + ')').includes('× ' + period + ' faults each'), JSON.stringify(tip));
      const est = line('estimated fault time (' + r.label + ')');
      if (cost === null) {
        assert.ok(est.startsWith('unknown'), est);
      } else {
        const ns = parseDuration(est);
        assert.ok(ns !== null && Math.abs(ns - records * period * cost) <= 0.005 * records * period * cost + 10, `${est} vs ${records * period * cost}`);
        assert.ok(est.includes('estimate'), est);
      }
      assert.equal(info.I.fault_sources[k].label, r.label);
    }
    await t.screenshot('timeline_diff_faults_hover.png');
  });

  await t.check('instant names stay text', async () => {
    assert.equal(await page.evaluate(() => document.querySelectorAll('img, iframe').length), 0);
    if (!X.hostile) return;
    const kind = info.I.kinds.find((kd) => kd.name === X.hostile_name);
    assert.ok(kind && kind.cat === '<b>' + X.hostile_name + '</b>' && kind.total >= 1, JSON.stringify(info.I.kinds));
    const got = await page.evaluate(() => window.aiprofTimeline.select(-1e18, 1e18, 0, 1e9));
    const text = await page.$eval('#selection-instants', (e) => e.textContent);
    assert.ok(text.includes(X.hostile_name + ' (<b>' + X.hostile_name + '</b>) ' + kind.total), text);
    assert.ok(got.instants > kind.total);
  });
};
