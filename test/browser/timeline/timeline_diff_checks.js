// Checks of `aiprof diff A B --timeline` (the timeline view's page for both
// runs aligned on steps): everything timeline_real_checks.js checks, plus the
// page's own parts, read from the page as drawn: the rank headers named
// from the page data's rank_labels (the slots, then every rank of A, then
// every rank of B), each rank with slices, a steps lane per rank whose
// rank-0 steps are the slots back to back, the markers lane named for the
// diff, the slot boundaries drawn across the lanes, the note saying what was
// dropped, and names the diff paired under different names (the page's
// color_as: by the name map, through the op, by role) drawn in one colour,
// one name on A's side and its partner on B's.
//
// The test's environment may ask for more (run_browser_test.py passes the
// environment through): AIPROF_EXPECT_RANKS=N (ranks per run) and
// AIPROF_EXPECT_COLOR_AS=NAME_A|NAME_B (a pair that must share a colour).
'use strict';
const real = require('./timeline_real_checks.js');

module.exports = async (t) => {
  const {page, assert} = t;
  await real(t);
  await page.keyboard.press('0');
  const lanes = await page.evaluate(() => window.aiprofTimeline.lanes());
  const D = await page.evaluate(() => {
    const d = window.aiprofTimeline.data;
    return {rank_labels: d.rank_labels, steps: d.steps, markers: d.markers.length, markers_label: d.markers_label,
            boundaries: d.boundaries};
  });

  const runs = await page.evaluate(() => {
    const d = window.aiprofTimeline.data;
    const ranks = {};
    d.rows.forEach((row) => {
      if (row.kind !== 'slices') return;
      const r = ranks[row.rank] || (ranks[row.rank] = new Set());
      for (const n of row.n) r.add(d.names[n]);
    });
    const out = {};
    for (const [r, set] of Object.entries(ranks)) out[r] = [...set];
    return {names: out, color_as: d.color_as || []};
  });

  await t.check('rank headers name the slots and every rank of the two runs', async () => {
    const want = Number(process.env.AIPROF_EXPECT_RANKS || 0);
    const a = D.rank_labels.filter((l) => l.startsWith('A (before): '));
    const b = D.rank_labels.filter((l) => l.startsWith('B (after): '));
    assert.ok(a.length >= 1 && b.length >= 1);
    assert.equal(D.rank_labels.length, 1 + a.length + b.length);
    assert.deepEqual(D.rank_labels.slice(1), a.concat(b));  // A's ranks, then B's
    if (want) {
      assert.equal(a.length, want);
      assert.equal(b.length, want);
      if (want > 1) for (const l of a.concat(b)) assert.ok(/, rank \d+$/.test(l), l);
    }
    // Rank headers in rank order; layer headers (level 1) sit between them.
    const headers = lanes.filter((l) => l.type === 'header' && D.rank_labels.includes(l.label)).map((l) => l.label);
    assert.deepEqual(headers, D.rank_labels);
    // Every run rank has slices of its own.
    for (let r = 1; r < D.rank_labels.length; r++) assert.ok((runs.names[r] || []).length > 0, 'rank ' + r + ' has no slice');
  });

  await t.check('names paired under different names share a colour, one on each side', async () => {
    const aRanks = [], bRanks = [];
    D.rank_labels.forEach((l, r) => { if (l.startsWith('A (before): ')) aRanks.push(r); if (l.startsWith('B (after): ')) bRanks.push(r); });
    const on = (ranks, name) => ranks.some((r) => (runs.names[r] || []).includes(name));
    const pairs = runs.color_as.slice();
    if (process.env.AIPROF_EXPECT_COLOR_AS) {
      const [na, nb] = process.env.AIPROF_EXPECT_COLOR_AS.split('|');
      assert.ok(pairs.some(([x, y]) => (x === nb && y === na) || (x === na && y === nb)),
                'expected pair missing from color_as: ' + JSON.stringify(pairs));
      assert.ok(on(aRanks, na), na + ' not drawn on A');
      assert.ok(on(bRanks, nb), nb + ' not drawn on B');
      const [ca, cb] = await page.evaluate(([x, y]) => [window.aiprofTimeline.nameColor(x), window.aiprofTimeline.nameColor(y)], [na, nb]);
      assert.ok(ca !== null && ca === cb, na + ': ' + ca + ' vs ' + nb + ': ' + cb);
    }
    for (const [name, as] of pairs) {
      const [c1, c2] = await page.evaluate(([x, y]) => [window.aiprofTimeline.nameColor(x), window.aiprofTimeline.nameColor(y)], [name, as]);
      if (c1 === null || c2 === null) continue;  // a name with no slice on the shown tracks
      assert.equal(c1, c2, name + ' vs ' + as);
    }
    // Names not recoloured keep their own hash: two different names that
    // are not paired differ (any two distinct unpaired names with different hues).
    const free = Object.values(runs.names).flat().filter((n) => !pairs.some(([x, y]) => x === n || y === n));
    if (free.length > 1) {
      const colours = await page.evaluate((ns) => ns.map((n) => window.aiprofTimeline.nameColor(n)), free.slice(0, 50));
      assert.ok(new Set(colours).size > 1);
    }
  });

  await t.check('slots are back to back from 0, each labelled with both runs', async () => {
    const slots = [];
    D.steps.rank.forEach((r, i) => { if (r === 0) slots.push([D.steps.ts[i], D.steps.dur[i]]); });
    assert.ok(slots.length > 0);
    slots.sort((a, b) => a[0] - b[0]);
    let at = 0;
    for (const [ts, dur] of slots) {
      assert.equal(ts, at);
      at += dur;
    }
    // The dashed lines across all lanes: every slot's start and the last end.
    assert.deepEqual(D.boundaries, slots.map((s) => s[0]).concat([at]));
    const stepLanes = lanes.filter((l) => l.type === 'steps');
    assert.equal(stepLanes.length, D.rank_labels.length);
    assert.equal(stepLanes[0].label, 'steps (' + slots.length + ')');
  });

  await t.check('the markers lane is the diff\'s and the note is shown', async () => {
    const marks = lanes.filter((l) => l.type === 'markers');
    if (D.markers > 0) {
      assert.equal(marks.length, 1);
      assert.ok(marks[0].label.startsWith(D.markers_label + ' ('), marks[0].label);
    }
    const note = await page.$eval('#page-note', (e) => e.textContent);
    assert.ok(note.includes('Time between steps is dropped'), note);
  });

  await t.check('the runs\' thread instants are drawn in their lanes, names as text', async () => {
    const I = await page.evaluate(() => window.aiprofTimeline.data.instants || null);
    const note = await page.$eval('#page-note', (e) => e.textContent);
    const m = /Thread instants in the steps are drawn \(A: (\d+), B: (\d+)/.exec(note);
    assert.ok(m, note);
    const carried = Number(m[1]) + Number(m[2]);
    assert.equal(I ? I.total : 0, carried);
    if (!carried) return;
    const rows = await page.evaluate(() => window.aiprofTimeline.instantsIn(-1e18, 1e18));
    // One rank a run (rank 1 is A, rank 2 B): each run's lanes hold its own carried instants.
    const perRun = (rank) => rows.filter((r) => r.rank === rank).reduce((a, r) => a + r.instants, 0);
    if (D.rank_labels.length === 3) assert.deepEqual([perRun(1), perRun(2)], [Number(m[1]), Number(m[2])]);
    await page.evaluate(() => window.aiprofTimeline.select(-1e18, 1e18, 0, 1e9));
    const text = await page.$eval('#selection-instants', (e) => e.textContent);
    for (const k of I.kinds) if (!k.fault) assert.ok(text.includes(k.name + ' (' + k.cat + ')'), text);
    assert.equal(await page.evaluate(() => document.querySelectorAll('img, svg, iframe').length), 0);
  });
};
