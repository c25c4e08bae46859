// `aiprof serve` in headless Chromium (Debian's, driven by playwright-core as
// the other browser tests are): clicks through the runs list, a run with
// hostile names, the search box, the timeline of a large run (zoomed in five
// levels and panned by a drag, the arrow keys and the links, each view drawn
// from one tile, the bytes the browser fetched counted), compare (with its
// timeline of both runs aligned on steps, zoomed and panned), the query
// page, the runs grouped by service and date, and the knowledge cards on the
// history page of a real server on loopback. On every page: the shared CSP (test/browser/csp_check.js,
// which also proves an injected script and handler do not run), no console
// or page error, no dialog, no request to another origin. Screenshots go
// beside --screenshots.
//
//   node serve_browser_checks.js --url http://127.0.0.1:PORT --screenshots DIR
//        --hostile-run ID --a ID --b ID --service NAME --fix TEXT
//        --large ID --large-slices N --large-bytes B [--chromium PATH]
'use strict';
const assert = require('node:assert/strict');
const path = require('node:path');
const fs = require('node:fs');
const {chromium} = require('playwright-core');
const cspCheck = require(path.join(__dirname, '..', 'browser', 'csp_check.js'));

function parseArgs(argv) {
  const args = {chromium: '/usr/bin/chromium'};
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, '')] = argv[i + 1];
  for (const k of ['url', 'screenshots', 'hostile-run', 'a', 'b', 'service', 'fix', 'large', 'large-slices', 'large-bytes']) if (!args[k]) throw new Error(`--${k} is required`);
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  fs.mkdirSync(args.screenshots, {recursive: true});
  const origin = new URL(args.url).origin;
  const launchArgs = ['--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--no-proxy-server'];
  if (process.getuid && process.getuid() === 0) launchArgs.push('--no-sandbox');
  const browser = await chromium.launch({executablePath: args.chromium, headless: true, args: launchArgs});
  const errors = [];
  let passed = 0;
  try {
    const page = await browser.newPage({viewport: {width: 1280, height: 900}});
    page.on('console', (msg) => { if (msg.type() === 'error') errors.push(`console error: ${msg.text()}`); });
    page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
    page.on('dialog', async (d) => { errors.push(`dialog (${d.type()}): ${d.message()}: script from a trace ran`); await d.dismiss(); });
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(origin + '/') || url.startsWith('data:') || url === 'about:blank') return route.continue();
      errors.push(`request to ${url}: pages fetch nothing from elsewhere`);
      return route.abort();
    });
    const t = {
      page, assert, errors,
      async check(name, fn) {
        try {
          await fn();
        } catch (e) {
          e.message = `check '${name}' failed: ${e.message}` + (errors.length ? `\n  errors so far:\n  ${errors.join('\n  ')}` : '');
          throw e;
        }
        ++passed;
        console.log(`  ok: ${name}`);
      },
    };
    // The CSP probe (csp_check.js) on the page now; a navigation right after
    // it can deliver its two expected reports late, so wait for them first.
    // Late copies are dropped only when they are the probe's own: its
    // script (by hash) or an inline handler (the pages have none).
    const probeHash = cspCheck.sha256('window.__aiprofInjected.push("script")').replace(/'/g, '');
    const checkCsp = async () => {
      const before = errors.length;
      await cspCheck.checkCsp(t);
      await new Promise((r) => setTimeout(r, 300));
      const late = errors.splice(before);
      errors.push(...late.filter((e) => !(/Content Security Policy/.test(e) &&
                                          (/inline event handler/.test(e) || e.includes(probeHash)))));
    };
    const shot = (name) => page.screenshot({path: path.join(args.screenshots, `serve_${name}.png`)});
    const text = () => page.evaluate(() => document.body.innerText);
    // Navigates by a click and waits for the new page.
    const clickTo = async (selector) => {
      await Promise.all([page.waitForNavigation({waitUntil: 'load', timeout: 60000}), page.click(selector)]);
    };

    await page.goto(args.url + '/', {waitUntil: 'load', timeout: 60000});
    await checkCsp(t);
    await shot('runs');
    await t.check('runs list shows every run with its state and the hostile file name as text', async () => {
      const rows = await page.$$eval('#runs tr[data-run]', (trs) => trs.length);
      assert.ok(rows >= 4, `${rows} runs listed`);
      const names = await page.$$eval('a.run-name', (as) => as.map((a) => a.textContent));
      assert.ok(names.includes('evil<img src=x onerror=alert(1)>.json'), names.join(' | '));
      assert.equal(await page.$$eval('#runs img', (x) => x.length), 0, 'no <img> element from a file name');
      assert.match(await text(), /failed/);
    });

    await t.check('search narrows the list (typed, Enter)', async () => {
      await page.type('#search input', 'convnet');
      await Promise.all([page.waitForNavigation({waitUntil: 'load'}), page.keyboard.press('Enter')]);
      const names = await page.$$eval('a.run-name', (as) => as.map((a) => a.textContent));
      assert.deepEqual(names, ['convnet.json']);
      assert.match(page.url(), /\?q=convnet$/);
    });
    await checkCsp(t);

    await page.goto(args.url + '/', {waitUntil: 'load'});
    await t.check('a click opens the hostile run: op names shown as text, nothing injected', async () => {
      await clickTo(`#runs tr[data-run="${args['hostile-run']}"] a.run-name`);
      const body = await text();
      assert.ok(body.includes('<script>alert(1)</script>'), 'the script-like op name is shown as text');
      assert.ok(body.includes('"><img src=x onerror=alert(2)>'), 'the attribute-breaking name is shown as text');
      assert.equal(await page.$$eval('main img', (x) => x.length), 0, 'no injected <img>');
      assert.equal(await page.$$eval('main script', (x) => x.length), 0, 'no injected <script>');
      assert.match(body, /Top ops by total time/);
      assert.match(body, /Diagnosis/);
    });
    await checkCsp(t);
    await shot('hostile_run');

    await t.check('the run page links to its full report', async () => {
      await clickTo('a[href$="/report"]');
      assert.match(await page.title(), /.+/);
      assert.ok((await text()).includes('<script>alert(1)</script>'));
    });
    await checkCsp(t);
    // (Not page.goBack(): a page restored from the back-forward cache
    // replays its console messages, the probe's reports included.)
    await page.goto(`${args.url}/runs/${args['hostile-run']}`, {waitUntil: 'load'});

    await t.check('timeline: drawn from tiles, zoom by link and by a click on the drawing', async () => {
      await clickTo('a[href$="/timeline"]');
      assert.equal(await page.$$eval('svg#timeline', (x) => x.length), 1);
      const titles = await page.$$eval('svg#timeline title', (ts) => ts.map((x) => x.textContent));
      assert.ok(titles.some((x) => x.startsWith('<script>alert(1)</script>')) ||
                titles.some((x) => /short slices/.test(x)), titles.slice(0, 5).join(' | '));
      // The run's thread instants (one per hostile op name, its category in <b>): ticks whose titles are text.
      const inst = await page.$$eval('svg#timeline rect.instant title', (ts) => ts.map((x) => x.textContent));
      assert.ok(inst.some((x) => x.includes('<script>alert(1)</script> (<b><script>alert(1)</script>)')), inst.join(' | '));
      assert.equal(await page.$$eval('svg#timeline rect.instant', (x) => x.reduce((a, r) => a + Number(r.dataset.n), 0)), 5);
      assert.equal(await page.$$eval('img, b', (x) => x.length), 0);
      assert.equal(await page.$eval('#tile-instants', (e) => e.textContent), '5');
      await clickTo('#timeline-nav a:nth-of-type(2)');  // zoom in
      assert.match(page.url(), /timeline\?start=\d+&end=\d+$/);
      const before = page.url();
      const box = await page.$eval('svg#timeline', (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.width]; });
      await Promise.all([page.waitForNavigation({waitUntil: 'load'}), page.mouse.click(box[0] + 220 + (box[2] - 220) / 2, box[1] + 30)]);
      assert.notEqual(page.url(), before, 'a click zooms in');
    });
    await checkCsp(t);
    await shot('timeline');
    await page.goto(`${args.url}/runs/${args['hostile-run']}`, {waitUntil: 'load'});

    // The large run's timeline: every view is one page drawn by the server
    // from one tile of the native file; the browser is handed nothing else.
    // Requests and their bytes are counted from here to the last view.
    const large = args.large, largeSlices = Number(args['large-slices']), largeBytes = Number(args['large-bytes']);
    const fetched = [];
    const onResponse = async (r) => {
      let size = 0;
      try { size = (await r.body()).length; } catch (e) { size = Number(r.headers()['content-length'] || 0); }
      fetched.push({url: r.url(), type: r.request().resourceType(), size});
    };
    const windowOf = () => {
      const u = new URL(page.url());
      return [Number(u.searchParams.get('start')), Number(u.searchParams.get('end'))];
    };
    const nav = () => page.$eval('#timeline-nav', (e) => ({start: Number(e.dataset.start), end: Number(e.dataset.end),
                                                         span: Number(e.dataset.span), px: Number(e.dataset.px)}));
    // What the view drew: its window, the tile's counts, the drawing's rects.
    const view = async () => {
      const v = await nav();
      v.listed = Number(await page.$eval('#tile-listed', (e) => e.textContent));
      v.merged = Number(await page.$eval('#tile-merged', (e) => e.textContent));
      v.slices = await page.$$eval('svg#timeline rect.slice', (x) => x.length);
      v.bins = await page.$$eval('svg#timeline rect.bin', (x) => x.length);
      v.names = await page.$$eval('svg#timeline rect.slice title', (ts) => ts.slice(0, 200).map((x) => x.textContent));
      v.paint = await page.evaluate(() => {
        const e = performance.getEntriesByName('first-contentful-paint')[0];
        return e ? e.startTime : -1;
      });
      assert.ok(v.slices + v.bins > 0, `the view [${v.start}, ${v.end}) draws something`);
      return v;
    };
    const paints = [];
    const views = [];
    // Navigates by `action` (a click, a key, a drag) and checks the new view.
    const step = async (what, action, expect) => {
      const before = await nav();
      await Promise.all([page.waitForNavigation({waitUntil: 'load', timeout: 60000}), action()]);
      const v = await view();
      assert.deepEqual(windowOf(), [v.start, v.end], 'the page shows the window its address asks');
      expect(before, v);
      views.push(`${what}: [${v.start}, ${v.end}) ${v.listed} listed + ${v.merged} merged`);
      paints.push(v.paint);
      return v;
    };
    const len = (v) => v.end - v.start;
    const svgBox = () => page.$eval('svg#timeline', (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top]; });
    const near = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b} (±${tol})`);
    let whole;

    await t.check('large run: the timeline opens whole, every one of its slices accounted for in one tile', async () => {
      await page.goto(`${args.url}/runs/${large}`, {waitUntil: 'load'});
      page.on('response', onResponse);
      await clickTo('a[href$="/timeline"]');
      whole = await view();
      paints.push(whole.paint);
      assert.equal(whole.start, 0);
      assert.equal(whole.end, whole.span);
      // The whole run in 1000 px: each of its slices started in the window,
      // all but the few as long as a pixel merged into bins.
      assert.equal(whole.listed + whole.merged, largeSlices, 'listed + merged = the run\'s slices (SQL count)');
      assert.ok(whole.merged > 0.99 * largeSlices, `${whole.merged} of ${largeSlices} merged`);
      assert.ok(whole.bins > 100, `${whole.bins} bins drawn`);
      views.push(`whole: [0, ${whole.span}) ${whole.listed} listed + ${whole.merged} merged`);
    });
    await checkCsp(t);
    await shot('large_timeline_whole');

    await t.check('large run: zoom in five levels (a click, the + key, the link, a click, the + key)', async () => {
      const box = await svgBox();
      const zoomed = (factor) => (b, v) => near(len(v), len(b) / factor, 2, 'window length');
      // A click in the middle of the drawing: 4x around that time.
      let v = await step('click', () => page.mouse.click(box[0] + 220 + 500, box[1] + 30), zoomed(4));
      near((v.start + v.end) / 2, whole.span / 2, whole.span / 1000 + 2, 'zoomed around the time clicked');
      await step('+ key', () => page.keyboard.press('+'), zoomed(2));
      await step('zoom in link', () => page.click('#timeline-nav a:text-is("zoom in")'), zoomed(2));
      const b2 = await svgBox();
      await step('click', () => page.mouse.click(b2[0] + 220 + 250, b2[1] + 30), zoomed(4));
      v = await step('+ key', () => page.keyboard.press('+'), zoomed(2));
      near(len(v), whole.span / 128, 8, '1/128 of the run');
      // Detail grows as the window shrinks: at 1/128 of the run, slices
      // longer than a pixel are drawn on their own, named from the trace.
      assert.ok(v.listed > 0 && v.slices > 0, `${v.listed} slices listed at 1/128`);
      assert.ok(v.names.some((n) => /^(aten::|ProfilerStep#|cuda|void |volta_|Memcpy|Memset)/.test(n)), v.names.slice(0, 10).join(' | '));
      assert.ok(v.listed + v.merged < largeSlices / 20, 'a deep view holds a small part of the run');
    });
    await shot('large_timeline_zoomed');

    await t.check('large run: pan by a drag, the arrow keys and the links, the window\'s length kept', async () => {
      const v0 = await nav();
      const perPx = (v0.end - v0.start) / v0.px;
      const box = await svgBox();
      // Drag the drawing 300 px to the left: later times come into view.
      await step('drag left', async () => {
        await page.mouse.move(box[0] + 220 + 700, box[1] + 30);
        await page.mouse.down();
        await page.mouse.move(box[0] + 220 + 550, box[1] + 30, {steps: 5});
        await page.mouse.move(box[0] + 220 + 400, box[1] + 30, {steps: 5});
        await page.mouse.up();
      }, (b, v) => { near(v.start - b.start, 300 * perPx, 2, 'dragged 300 px'); near(len(v), len(b), 1, 'length'); });
      await step('→ key', () => page.keyboard.press('ArrowRight'),
                 (b, v) => { near(v.start - b.start, len(b) / 2, 2, 'half a window later'); near(len(v), len(b), 1, 'length'); });
      await step('← key', () => page.keyboard.press('ArrowLeft'),
                 (b, v) => { near(b.start - v.start, len(b) / 2, 2, 'half a window earlier'); near(len(v), len(b), 1, 'length'); });
      await step('« pan link', () => page.click('#timeline-nav a:text-is("« pan")'),
                 (b, v) => { near(b.start - v.start, len(b) / 2, 2, 'half a window earlier'); near(len(v), len(b), 1, 'length'); });
      const b3 = await svgBox();
      await step('drag right', async () => {
        await page.mouse.move(b3[0] + 220 + 200, b3[1] + 30);
        await page.mouse.down();
        await page.mouse.move(b3[0] + 220 + 600, b3[1] + 30, {steps: 8});
        await page.mouse.up();
      }, (b, v) => { near(b.start - v.start, 400 * perPx, 2, 'dragged 400 px'); near(len(v), len(b), 1, 'length'); });
      await step('zoom out link', () => page.click('#timeline-nav a:text-is("zoom out")'),
                 (b, v) => near(len(v), 2 * len(b), 2, 'window length'));
      await step('0 key', () => page.keyboard.press('0'), (b, v) => assert.deepEqual([v.start, v.end], [0, v.span]));
    });
    await checkCsp(t);
    page.off('response', onResponse);

    await t.check('large run: each view was one page drawn from one tile; the browser never got the trace', async () => {
      await new Promise((r) => setTimeout(r, 100));
      const total = fetched.reduce((n, f) => n + f.size, 0);
      const bad = fetched.filter((f) => f.type !== 'document' || !new URL(f.url).pathname.startsWith(`/runs/${large}/timeline`));
      assert.deepEqual(bad.map((f) => `${f.type} ${f.url}`), [], 'only the timeline pages were requested');
      assert.equal(fetched.length, views.length, `${fetched.length} requests for ${views.length} views`);
      const biggest = Math.max(...fetched.map((f) => f.size));
      assert.ok(total < largeBytes / 20, `${total} bytes fetched for ${views.length} views of a ${largeBytes}-byte trace`);
      console.log(`  large run: ${largeSlices} slices, ${largeBytes} bytes of JSON; ${views.length} views, ` +
                  `${total} bytes fetched in all (largest page ${biggest}); first contentful paint per view (ms): ` +
                  paints.map((x) => x.toFixed(0)).join(' '));
      for (const v of views) console.log(`    ${v}`);
    });
    await page.goto(`${args.url}/runs/${args['hostile-run']}`, {waitUntil: 'load'});

    await t.check('query page: SQL typed and run, rows escaped', async () => {
      await clickTo('a[href$="/query"]');
      await page.$eval('#query textarea', (el) => { el.value = ''; });
      await page.type('#query textarea', 'SELECT name, dur FROM slices ORDER BY ts');
      await clickTo('#query button');
      const cells = await page.$$eval('table[data-key="rows"] td', (tds) => tds.map((td) => td.textContent));
      assert.ok(cells.includes('<script>alert(1)</script>'), cells.join(' | '));
    });
    await checkCsp(t);
    await shot('query');
    // trial_serve2 S2: a result wider than the window (a run's args, a long
    // SQL) scrolled the whole page sideways (291 px at 1280 px for
    // `SELECT * FROM slices LIMIT 3` of ResNet50): the rows scroll in their
    // own box, the page keeps the window's width.
    await t.check('query page: a wide result scrolls in its box, not the page', async () => {
      const wide = `SELECT name, hex(zeroblob(700)) AS wide, '${'w'.repeat(1500)}' AS token FROM slices LIMIT 2`;
      await page.goto(`${args.url}/runs/${args['hostile-run']}/query?sql=${encodeURIComponent(wide)}`, {waitUntil: 'load'});
      const m = await page.evaluate(() => {
        const box = document.querySelector('table[data-key="rows"]').closest('div.table');
        return {page: document.documentElement.scrollWidth, win: window.innerWidth,
                box: box ? box.scrollWidth - box.clientWidth : -1};
      });
      assert.ok(m.page <= m.win, `the page is ${m.page} px wide in a ${m.win} px window`);
      assert.ok(m.box > 0, `the rows' box scrolls (${m.box} px past its width)`);
    });

    await t.check('compare from the runs list: verdicts with intervals', async () => {
      await page.goto(args.url + '/', {waitUntil: 'load'});
      await page.type('#compare input[data-param="a"]', args.a);
      await page.type('#compare input[data-param="b"]', args.b);
      await clickTo('#compare button');
      assert.match(page.url(), new RegExp(`/compare\\?a=${args.a}&b=${args.b}$`));
      const body = await text();
      assert.match(body, /regressed/i);
      assert.match(body, /CI|interval/i);
    });
    await checkCsp(t);
    await shot('compare');

    await t.check('compare: both runs\' steady step drawn from its start at one time per pixel; next step by a click',
                  async () => {
      const heads = await page.$$eval('#compare-timeline h3', (hs) => hs.map((h) => h.textContent));
      assert.equal(heads.length, 2, heads.join(' | '));
      assert.match(heads[0], new RegExp(`^Run ${args.a} \\(before\\): step \\d+`));
      assert.match(heads[1], new RegExp(`^Run ${args.b} \\(after\\): step \\d+`));
      // The same time per pixel: each drawing's width (label column 220 px)
      // is in proportion to its step's duration.
      const widths = await page.$$eval('#compare-timeline svg', (svgs) => svgs.map((x) => Number(x.getAttribute('width')) - 220));
      assert.equal(widths.length, 2);
      assert.equal(Math.max(...widths), 1000, widths.join(', '));
      const nav = await page.$eval('#compare-timeline-nav', (e) => e.textContent);
      assert.match(nav, /Steady step 1 of \d+/);
      await clickTo('#compare-timeline-nav a[href*="step=1"]');
      assert.match(page.url(), /step=1$/);
      assert.match(await page.$eval('#compare-timeline-nav', (e) => e.textContent), /Steady step 2 of/);
      assert.equal(await page.$$eval('#compare-timeline svg', (x) => x.length), 2);
      await page.$eval('#compare-timeline-nav', (e) => e.scrollIntoView());
    });
    await t.check('compare timeline: zoom by a click and the + key, pan by a drag and the arrow keys, both runs at one scale',
                  async () => {
      const cnav = () => page.$eval('#compare-timeline-nav', (e) => ({start: Number(e.dataset.start), end: Number(e.dataset.end),
                                                                     span: Number(e.dataset.span), px: Number(e.dataset.px)}));
      const widths = () => page.$$eval('#compare-timeline svg', (svgs) => svgs.map((x) => Number(x.getAttribute('width')) - 220));
      const go = async (action) => { await Promise.all([page.waitForNavigation({waitUntil: 'load', timeout: 60000}), action()]); };
      const whole = await cnav();
      assert.equal(whole.start, 0);
      assert.equal(whole.end, whole.span);
      // The drawing of the longer step (the whole window wide), scrolled into view.
      const boxOf = async () => {
        const all = await page.$$eval('#compare-timeline svg', (svgs) => svgs.map((x) => [x.id, Number(x.getAttribute('width'))]));
        const id = all.reduce((m, x) => (x[1] > m[1] ? x : m))[0];
        await page.$eval('#' + id, (el) => el.scrollIntoView({block: 'center'}));
        return page.$eval('#' + id, (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top]; });
      };
      // A click at a tenth of the window: 4x around that time.
      const box = await boxOf();
      await go(() => page.mouse.click(box[0] + 220 + 100, box[1] + 30));
      let v = await cnav();
      const near = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b} (±${tol})`);
      near(v.end - v.start, whole.span / 4, 2, 'zoomed 4x');
      assert.match(page.url(), /\/compare\?a=\d+&b=\d+&step=1&start=\d+&end=\d+$/);
      // The same time per pixel on both: the window is 1000 px, each run's
      // drawing as wide as the part of the window its step lasts.
      let w = await widths();
      assert.ok(w.length >= 1 && Math.max(...w) <= 1000, w.join(', '));
      await go(() => page.keyboard.press('+'));
      const z = await cnav();
      near(z.end - z.start, (v.end - v.start) / 2, 2, 'zoomed 2x');
      const perPx = (z.end - z.start) / z.px;
      const b = await boxOf();
      // Drag 200 px to the right: earlier times (clamped at the step's start).
      await go(async () => {
        await page.mouse.move(b[0] + 220 + 400, b[1] + 30);
        await page.mouse.down();
        await page.mouse.move(b[0] + 220 + 600, b[1] + 30, {steps: 6});
        await page.mouse.up();
      });
      v = await cnav();
      near(v.start, Math.max(0, z.start - 200 * perPx), 2, 'dragged 200 px');
      near(v.end - v.start, z.end - z.start, 1, 'length kept');
      await page.$eval('#compare-timeline-nav', (e) => e.scrollIntoView());
      await shot('compare_timeline_zoomed');
      await go(() => page.keyboard.press('ArrowRight'));
      const r = await cnav();
      near(r.start, v.start + (v.end - v.start) / 2, 2, 'half a window later');
      assert.ok((await page.$$eval('#compare-timeline svg', (x) => x.length)) +
                (await page.$$eval('#compare-timeline .step-ended', (x) => x.length)) === 2, 'each run drawn or said to have ended');
      assert.match(await page.$eval('#compare-timeline-nav', (e) => e.textContent), /Steady step 2 of/);
      await go(() => page.click('#compare-zoom a:text-is("whole step")'));
      w = await widths();
      assert.equal(w.length, 2);
      assert.equal(Math.max(...w), 1000, w.join(', '));
      await page.$eval('#compare-timeline-nav', (e) => e.scrollIntoView());
    });
    await checkCsp(t);
    await shot('compare_timeline');

    await t.check('the hostile run\'s flame graph: names as text, nothing injected', async () => {
      await page.goto(`${args.url}/runs/${args['hostile-run']}/flame`, {waitUntil: 'load'});
      const html = await page.content();
      assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;') || html.includes('\\u003cscript\\u003ealert(1)'),
                'hostile op name in the flame graph, escaped (as text or in its JSON data)');
      assert.equal(await page.$$eval('img', (x) => x.length), 0, 'no injected <img>');
    });
    await checkCsp(t);

    for (const view of ['flame', 'topology']) {
      await t.check(`the ${view} view of a GPU run opens from its page`, async () => {
        await page.goto(`${args.url}/runs/${args.b}`, {waitUntil: 'load'});
        await clickTo(`a[href$="/${view}"]`);
        const drawn = view === 'flame' ? await page.$$eval('#flame *', (x) => x.length)
                                       : await page.$$eval('svg', (x) => x.length);
        assert.ok(drawn >= 1, `the ${view} is drawn`);
      });
      await checkCsp(t);
      await shot(view);
    }

    await t.check('a failed run shows the importer\'s message', async () => {
      await page.goto(args.url + '/', {waitUntil: 'load'});
      await clickTo('#runs tr:has(td.failed) a.run-name');
      assert.match(await page.$eval('#run-error', (e) => e.textContent), /truncated JSON/);
    });
    await checkCsp(t);

    await t.check('runs grouped by service (the pushed one\'s hostile name as text), then by date by a click',
                  async () => {
      await page.goto(args.url + '/', {waitUntil: 'load'});
      const heads = await page.$$eval('#runs h2.group', (hs) => hs.map((h) => h.textContent));
      assert.ok(heads.some((h) => h.startsWith(`Service: ${args.service} (1 run)`)), heads.join(' | '));
      assert.ok(heads[heads.length - 1].startsWith('Service: (no service)'), heads.join(' | '));
      assert.equal(await page.$$eval('main img', (x) => x.length), 0, 'no <img> from a service name');
      await clickTo('#grouping a[href="/?group=date"]');
      const dates = await page.$$eval('#runs h2.group', (hs) => hs.map((h) => h.dataset.group));
      assert.ok(dates.length >= 1 && dates.every((d) => /^\d{4}-\d{2}-\d{2}$/.test(d)), dates.join(' | '));
      assert.ok((await page.$$eval('#runs tr[data-run]', (x) => x.length)) >= 5);
    });
    await checkCsp(t);
    await shot('runs_by_date');

    await t.check('history lists the knowledge cards with their measured change, the hostile fix as text', async () => {
      await clickTo('nav a[href="/history"]');
      const cells = await page.$$eval('#cards td', (tds) => tds.map((td) => td.textContent));
      assert.ok(cells.includes(args.fix), cells.join(' | '));
      assert.ok(cells.some((c) => /^[−-]\d+(\.\d+)?%$/.test(c)), 'a measured change in percent: ' + cells.join(' | '));
      assert.equal(await page.$$eval('main img', (x) => x.length), 0, 'no <img> from a card');
    });
    await checkCsp(t);
    await shot('history_cards');
    await new Promise((r) => setTimeout(r, 200));
  } finally {
    await browser.close();
  }
  if (errors.length) throw new Error(`${errors.length} error(s):\n  ` + errors.join('\n  '));
  console.log(`serve browser checks: ${passed} passed, 0 failed`);
}

main().catch((e) => {
  console.error(`FAILED: ${e.stack || e}`);
  process.exit(1);
});
