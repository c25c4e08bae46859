// Browser checks of the flame graph page (aiprof view --flame -o x.html).
// run(t, {query, hostile}) is shared by the plain, differential and
// hostile-name pages; see check_page.js for `t`.
'use strict';

async function frameCount(page, sel = '#flame .frame') {
  return page.$$eval(sel, (els) => els.length);
}

async function run(t, opts) {
  const {page, assert} = t;
  const query = opts.query;
  await t.check('the data parses and frames are drawn', async () => {
    const n = await frameCount(page);
    assert.ok(n >= (opts.minFrames || 5), `only ${n} frames`);
    const rootText = await page.$eval('#flame .frame[data-f="0"]', (e) => e.textContent);
    assert.equal(rootText, 'all');
    const summary = await page.$eval('#summary', (e) => e.textContent);
    // The source names what one event is (never 'undefined').
    assert.match(summary, /from (span nesting \(\d+ slices|stack samples \(\d+ samples|aligned diff nodes \(\d+ nodes)/);
  });

  await t.check('a tooltip shows total and self time with shares', async () => {
    const f = await page.evaluate(() => {
      const m = window.aiprofFlame.main;
      let best = 1;
      for (let i = 1; i < m.n; i++) if (m.depth[i] >= 2 && m.total[i] > m.total[best] / 4 && m.self[i] > 0) { best = i; break; }
      return best;
    });
    await page.hover(`#flame .frame[data-f="${f}"]`);
    const tip = await page.$eval('#tooltip', (e) => ({shown: getComputedStyle(e).display !== 'none', text: e.textContent}));
    assert.ok(tip.shown, 'tooltip hidden');
    assert.match(tip.text, /total.*of all/);
    assert.match(tip.text, /self.*%/);
    if (opts.diff) assert.match(tip.text, /baseline total/);
    // A diff's frames say their calls per step on both runs (the page's data).
    if (opts.calls) {
      const want = await page.evaluate((f) => [window.aiprofFlame.data.calls[f], window.aiprofFlame.data.diff.calls[f]], f);
      assert.match(tip.text, new RegExp(`calls per step${String(+Number(want[0]).toPrecision(4)).replace('.', '\\.')}`));
      assert.match(tip.text, /baseline calls per step/);
    }
  });

  await t.check(`search '${query}' highlights matches and shows their share`, async () => {
    assert.equal(await frameCount(page, '#flame .frame.match'), 0);
    await page.type('#search', query);
    const shown = await page.$$eval('#flame .frame.match', (els) => els.map((e) => e.textContent));
    assert.ok(shown.length > 0, 'no frame highlighted');
    for (const s of shown) assert.ok(s.toLowerCase().includes(query.toLowerCase()), `'${s}' highlighted for '${query}'`);
    // The share, computed here from the page's data independently of its code:
    // each matching frame's total, not counting matches nested in matches.
    const expected = await page.evaluate((q) => {
      const d = window.aiprofFlame.data;
      const n = d.parent.length, hit = new Uint8Array(n), covered = new Uint8Array(n);
      let sum = 0;
      for (let i = 1; i < n; i++) {  // parents precede children
        hit[i] = d.names[d.name[i]].toLowerCase().includes(q.toLowerCase()) ? 1 : 0;
        covered[i] = covered[d.parent[i]] || hit[d.parent[i]];
        if (hit[i] && !covered[i]) sum += d.total[i];
      }
      return (100 * sum / d.total[0]).toFixed(2) + '%';
    }, query);
    const info = await page.$eval('#match-info', (e) => e.textContent);
    assert.ok(info.startsWith(`Matched: ${expected} of all`), `'${info}' but expected ${expected}`);
  });

  await t.check('a /regex/ search (flags g and y ignored) finds the same frames; a bad one says so', async () => {
    const substring = await page.$$eval('#flame .frame.match', (els) => els.map((e) => e.dataset.f).join());
    const retype = async (text) => {
      await page.click('#search', {clickCount: 3});
      await page.keyboard.press('Backspace');
      await page.type('#search', text);
    };
    await retype(`/${query.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/g`);
    const regex = await page.$$eval('#flame .frame.match', (els) => els.map((e) => e.dataset.f).join());
    assert.equal(regex, substring);
    await retype('/(/');
    assert.equal(await page.$eval('#match-info', (e) => e.textContent), 'invalid pattern');
    await retype(query);
  });

  let zoomed;
  await t.check('clicking a frame zooms into it', async () => {
    const before = await frameCount(page);
    zoomed = await page.evaluate(() => {
      const m = window.aiprofFlame.main;
      let best = -1;
      for (let i = 1; i < m.n; i++) {
        if (m.depth[i] >= 2 && m.children[i].length && m.total[i] < 0.9 * m.total[0] && (best < 0 || m.total[i] > m.total[best])) best = i;
      }
      return best;
    });
    assert.ok(zoomed > 0, 'no frame to zoom into');
    await page.click(`#flame .frame[data-f="${zoomed}"]`);
    const state = await page.evaluate((z) => {
      const m = window.aiprofFlame.main;
      const chart = document.getElementById('flame');
      const el = chart.querySelector(`.frame[data-f="${z}"]`);
      const inSubtree = (f) => { for (let a = f; a >= 0; a = m.parent[a]) if (a === z) return true; return false; };
      const isAncestor = (f) => { for (let a = m.parent[z]; a >= 0; a = m.parent[a]) if (a === f) return true; return false; };
      const stray = [...chart.querySelectorAll('.frame')].map((e) => Number(e.dataset.f)).filter((f) => !inSubtree(f) && !isAncestor(f));
      return {width: el.getBoundingClientRect().width, chart: chart.clientWidth, stray: stray.length,
              crumbs: document.getElementById('crumbs').textContent, name: window.aiprofFlame.data.names[m.name[z]],
              info: document.getElementById('match-info').textContent};
    }, zoomed);
    assert.ok(state.width > 0.95 * state.chart, `zoomed frame is ${state.width}px of ${state.chart}px`);
    assert.equal(state.stray, 0, 'frames outside the zoomed subtree are still drawn');
    assert.ok(state.crumbs.endsWith(state.name), `breadcrumbs '${state.crumbs}'`);
    assert.match(state.info, /of the zoomed frame/);
    const after = await frameCount(page);
    assert.notEqual(after, before, 'zoom did not change what is shown');
  });

  await t.check('the sandwich view shows callers and callees of the selected frame', async () => {
    await page.click('#sandwich-btn');
    const s = await page.evaluate(() => ({
      shown: getComputedStyle(document.getElementById('sandwich-view')).display !== 'none',
      callers: document.querySelectorAll('#callers .frame').length,
      callees: document.querySelectorAll('#callees .frame').length,
      title: document.getElementById('sandwich-title').textContent,
    }));
    assert.ok(s.shown);
    assert.ok(s.callers >= 2, `${s.callers} caller frames`);  // the function and at least one caller
    assert.ok(s.callees >= 2, `${s.callees} callee frames`);  // zoomed frames have children
    await page.click('#sandwich-close');
  });

  await t.check('reset and orientation', async () => {
    await page.click('#reset');
    const rootWidth = await page.$eval('#flame .frame[data-f="0"]', (e) => e.getBoundingClientRect().width);
    const chartWidth = await page.$eval('#flame', (e) => e.clientWidth);
    assert.ok(rootWidth > 0.95 * chartWidth);
    const topFlame = await page.$eval('#flame .frame[data-f="0"]', (e) => e.offsetTop);
    await page.click('#orient');
    const topIcicle = await page.$eval('#flame .frame[data-f="0"]', (e) => e.offsetTop);
    assert.ok(topFlame > 0 && topIcicle === 0, `root top ${topFlame} (flame) -> ${topIcicle} (icicle)`);
    await page.click('#orient');
  });

  if (opts.diff) {
    await t.check('differential colours: the frame whose self share grew most is red', async () => {
      await page.click('#search', {clickCount: 3});
      await page.keyboard.press('Backspace');
      assert.equal(await frameCount(page, '#flame .frame.match'), 0, 'clearing the search left highlights');
      const c = await page.evaluate(() => {
        const d = window.aiprofFlame.data, diff = d.diff;
        let up = -1, upDelta = 0, down = -1, downDelta = 0;
        for (let i = 1; i < d.parent.length; i++) {
          const delta = d.self[i] / d.total[0] - diff.self[i] / diff.root_total;
          if (delta > upDelta) { up = i; upDelta = delta; }
          if (delta < downDelta) { down = i; downDelta = delta; }
        }
        const colour = (f) => { const e = document.querySelector(`#flame .frame[data-f="${f}"]`); return e ? getComputedStyle(e).backgroundColor : null; };
        return {up: colour(up), down: colour(down)};
      });
      const rgb = (s) => s.match(/\d+/g).map(Number);
      const [ur, , ub] = rgb(c.up), [dr, , db] = rgb(c.down);
      assert.ok(ur > ub, `largest growth drawn ${c.up}`);
      assert.ok(db > dr, `largest shrink drawn ${c.down}`);
    });
  }

  if (opts.hostile) {
    await t.check('hostile names stay text', async () => {
      const r = await page.evaluate(() => ({
        imgs: document.querySelectorAll('img').length,
        svgs: document.querySelectorAll('svg').length,
        scripts: document.querySelectorAll('script').length,
        texts: [...document.querySelectorAll('#flame .frame')].map((e) => e.textContent),
      }));
      assert.equal(r.imgs, 0);
      assert.equal(r.svgs, 0);
      assert.equal(r.scripts, 2);  // the data and the page's code
      assert.ok(r.texts.includes('</script><img src=x onerror=alert(1)>'), 'hostile name not shown as text');
      assert.ok(r.texts.includes('<svg onload=alert(2)>'));
    });
  }
  await t.screenshot(`${opts.name || 'flame'}_after_checks.png`);
}

module.exports = (t) => run(t, {query: 'conv', name: 'flame'});
module.exports.run = run;
