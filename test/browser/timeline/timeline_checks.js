// Checks of `aiprof view --timeline` on the hand-made trace written by
// make_timeline_page.py (timeline_trace.json beside the page). Expected
// figures are computed here from that trace's raw events, not from the page.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const HOSTILE = '</script><img src=x onerror=alert(1)>';
const LABEL_W = 280, AXIS_H = 18, ROW_H = 16;

module.exports = async (t) => {
  const {page, assert} = t;
  const htmlPath = decodeURIComponent(new URL(page.url()).pathname);
  const raw = JSON.parse(fs.readFileSync(path.join(path.dirname(htmlPath), 'timeline_trace.json'), 'utf8'));
  const slices = raw.traceEvents.filter((e) => e.ph === 'X');
  const originNs = Math.min(...raw.traceEvents.filter((e) => e.ts !== undefined).map((e) => e.ts)) * 1000;
  const mainSlices = slices.filter((e) => e.pid === 1 && e.tid === 1)
      .map((e) => ({name: e.name, a: e.ts * 1000 - originNs, b: (e.ts + e.dur) * 1000 - originNs}));

  const state = () => page.evaluate(() => {
    const r = document.getElementById('range').dataset;
    return {start: Number(r.start), end: Number(r.end)};
  });
  // The canvas after the next animation frame (input redraws once per frame).
  const pixels = () => page.evaluate(() => new Promise((ok) =>
    requestAnimationFrame(() => requestAnimationFrame(() => ok(document.getElementById('canvas').toDataURL())))));
  const box = await (await page.$('#canvas')).boundingBox();
  const lanes = await page.evaluate(() => window.aiprofTimeline.lanes());
  const mainLane = lanes.find((l) => l.label === 'python3: main (1)');
  const xOf = async (tns) => {
    const v = await page.evaluate(() => window.aiprofTimeline.view());
    return box.x + LABEL_W + (tns - v.start) / (v.end - v.start) * (box.width - LABEL_W);
  };
  const laneY = (lane, depth) => box.y + AXIS_H + lane.y + 2 + depth * ROW_H + ROW_H / 2;
  const counts = await page.evaluate(() => window.aiprofTimeline.data.counts);
  const lod = counts.detailed < counts.slices;

  await t.check('page is ready, with its elements', async () => {
    assert.equal(await page.evaluate(() => document.body.dataset.ready), '1');
    for (const sel of ['#canvas', '#search', '#search-count', '#range', '#lod', '#details', '#selection', '#legend']) {
      assert.ok(await page.$(sel), `missing ${sel}`);
    }
    assert.ok(mainLane, 'no lane for the main thread: ' + JSON.stringify(lanes.map((l) => l.label)));
    for (const type of ['markers', 'steps', 'gaps', 'slices', 'counter', 'header']) {
      assert.ok(lanes.some((l) => l.type === type), `no ${type} lane`);
    }
    assert.equal(await page.evaluate(() => window.aiprofTimeline.data.origin_ns), String(originNs));
    assert.equal(counts.slices, slices.length);
  });

  await t.check('the hostile name stays text', async () => {
    assert.equal(await page.evaluate(() => document.querySelectorAll('img').length), 0);
    const names = await page.evaluate(() => window.aiprofTimeline.data.names);
    assert.ok(names.includes(HOSTILE));
    await page.type('#search', '</script>');
    assert.equal(await page.$eval('#search-count', (e) => e.dataset.count), '1');
    // Click the hostile slice: its name appears in the details panel as text.
    const s = mainSlices.find((e) => e.name === HOSTILE);
    await page.mouse.click(await xOf((s.a + s.b) / 2), laneY(mainLane, 1));
    const details = await page.$eval('#details', (e) => e.textContent);
    assert.ok(details.includes(HOSTILE), details);
    assert.equal(await page.evaluate(() => document.querySelectorAll('#details img, img, iframe').length), 0);
    await page.click('#search', {clickCount: 3});
    await page.keyboard.press('Backspace');
  });

  await t.check('search highlights and counts by name', async () => {
    const before = await pixels();
    await page.type('#search', 'ATEN::ADD_');
    const expected = slices.filter((e) => e.name.toLowerCase().includes('aten::add_')).length;
    assert.equal(await page.$eval('#search-count', (e) => e.dataset.count), String(expected));
    assert.notEqual(await pixels(), before, 'search did not change the canvas');
    await page.click('#search', {clickCount: 3});
    await page.keyboard.press('Backspace');
    assert.equal(await page.$eval('#search-count', (e) => e.textContent), '');
  });

  await t.check('wheel zooms around the cursor, drag pans', async () => {
    const s0 = await state(), p0 = await pixels();
    await page.mouse.move(box.x + LABEL_W + (box.width - LABEL_W) / 2, laneY(mainLane, 0));
    await page.mouse.wheel(0, -400);
    const s1 = await state();
    assert.ok(s1.end - s1.start < (s0.end - s0.start) * 0.7, JSON.stringify([s0, s1]));
    assert.notEqual(await pixels(), p0, 'zoom did not change the canvas');
    const x = box.x + LABEL_W + 200, y = laneY(mainLane, 3);
    await page.mouse.move(x, y);
    await page.mouse.down();
    await page.mouse.move(x + 100, y, {steps: 5});
    await page.mouse.up();
    const s2 = await state();
    assert.ok(s2.start < s1.start, 'drag right should move the view earlier: ' + JSON.stringify([s1, s2]));
    assert.ok(Math.abs((s2.end - s2.start) - (s1.end - s1.start)) < 2, 'drag changed the zoom');
  });

  await t.check('keyboard WASD zooms and pans', async () => {
    await page.focus('#canvas');
    await page.keyboard.press('0');
    const s0 = await state();
    await page.keyboard.press('w');
    const s1 = await state();
    assert.ok(s1.end - s1.start < s0.end - s0.start, 'w should zoom in');
    await page.keyboard.press('d');
    const s2 = await state();
    assert.ok(s2.start > s1.start, 'd should pan right');
    await page.keyboard.press('a');
    assert.ok((await state()).start < s2.start, 'a should pan left');
    await page.keyboard.press('s');
    const s3 = await state();
    assert.ok(s3.end - s3.start > s1.end - s1.start, 's should zoom out');
    await page.keyboard.press('0');
  });

  await t.check('shift+drag selection totals match the trace', async () => {
    const x0 = await xOf(150_000), x1 = await xOf(1_650_000);
    const y = laneY(mainLane, 0);
    await page.keyboard.down('Shift');
    await page.mouse.move(x0, y);
    await page.mouse.down();
    await page.mouse.move(x1, y + ROW_H, {steps: 8});
    await page.mouse.up();
    await page.keyboard.up('Shift');
    const got = await page.$eval('#selection', (e) => ({...e.dataset}));
    assert.ok(got.count !== undefined, 'no selection shown');
    const t0 = Number(got.t0), t1 = Number(got.t1);
    assert.ok(Math.abs(t0 - 150_000) < 5000 && Math.abs(t1 - 1_650_000) < 5000, JSON.stringify(got));
    // Independent: the main thread's slices overlapping [t0, t1], durations clipped.
    const detailedMin = counts.detailed < counts.slices ? await page.evaluate(() => window.aiprofTimeline.data.threshold_ns) : 0;
    let n = 0, total = 0;
    for (const e of mainSlices) {
      if (e.b - e.a < detailedMin) continue;  // merged: counted apart
      if (e.b < t0 || e.a > t1) continue;
      n++;
      total += Math.min(e.b, t1) - Math.max(e.a, t0);
    }
    assert.equal(Number(got.count), n);
    assert.ok(Math.abs(Number(got.totalNs) - total) < 1e-3 * Math.max(1, total), `${got.totalNs} vs ${total}`);
    const text = await page.$eval('#selection', (e) => e.textContent);
    assert.ok(text.includes(String(n) + ' slices'), text);
  });

  await t.check('clicking a launch shows its flow', async () => {
    const launch = mainSlices.find((e) => e.name === 'cudaLaunchKernel');
    await page.keyboard.press('Escape');
    await page.evaluate(([a, b]) => window.aiprofTimeline.setView(a, b), [launch.a - 20_000, launch.b + 200_000]);
    const before = await pixels();
    await page.mouse.click(await xOf((launch.a + launch.b) / 2), laneY(mainLane, 3));  // step > conv2d > convolution > launch
    const details = await page.$eval('#details', (e) => e.textContent);
    assert.ok(details.includes('cudaLaunchKernel'), details);
    assert.ok(details.includes('flows1'), details);
    assert.notEqual(await pixels(), before);
    await t.screenshot(lod ? 'timeline_lod_flow.png' : 'timeline_flow.png');
  });

  if (lod) {
    await t.check('merged slices are drawn as density bars and counted exactly', async () => {
      await page.keyboard.press('0');
      const th = await page.evaluate(() => window.aiprofTimeline.data.threshold_ns);
      assert.ok(th > 0);
      assert.match(await page.$eval('#lod', (e) => e.textContent), /merged into density bars/);
      const merged = mainSlices.filter((e) => e.b - e.a < th).length;
      assert.ok(merged > 0);
      const r = await page.evaluate((h) => window.aiprofTimeline.select(-1e12, 1e12, h.y, h.y + h.h), mainLane);
      assert.equal(r.merged, merged);
      // Zoomed into the short ops, the finest level's bars still draw.
      const add = mainSlices.find((e) => e.name === 'aten::add_');
      await page.evaluate((a) => window.aiprofTimeline.setView(a - 5000, a + 60_000), add.a);
      await page.keyboard.press('Escape');
    });
  }
};
