// Checks of `aiprof diff A B --timeline` (the timeline view's page for both
// runs aligned on steps): everything timeline_real_checks.js checks, plus the
// page's own parts, read from the page as drawn: three rank headers named
// from the page data's rank_labels (the slots, A, B), a steps lane per rank
// whose rank-0 steps are the slots back to back, the markers lane named for
// the diff, the slot boundaries drawn across the lanes, and the note saying
// what was dropped.
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

  await t.check('rank headers name the slots and the two runs', async () => {
    assert.equal(D.rank_labels.length, 3);
    // Rank headers in rank order; layer headers (level 1) sit between them.
    const headers = lanes.filter((l) => l.type === 'header' && D.rank_labels.includes(l.label)).map((l) => l.label);
    assert.deepEqual(headers, D.rank_labels);
    assert.ok(headers[1].startsWith('A (before): '), headers[1]);
    assert.ok(headers[2].startsWith('B (after): '), headers[2]);
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
    assert.equal(stepLanes.length, 3);
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
};
