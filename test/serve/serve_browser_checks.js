// `aiprof serve` in headless Chromium (Debian's, driven by playwright-core as
// the other browser tests are): clicks through the runs list, a run with
// hostile names, the search box, compare (with its timeline of both runs
// aligned on steps), the query page, the runs grouped
// by service and date, and the knowledge cards on the history page of a real
// server on loopback. On every page: the shared CSP (test/browser/csp_check.js,
// which also proves an injected script and handler do not run), no console
// or page error, no dialog, no request to another origin. Screenshots go
// beside --screenshots.
//
//   node serve_browser_checks.js --url http://127.0.0.1:PORT --screenshots DIR
//        --hostile-run ID --a ID --b ID --service NAME --fix TEXT [--chromium PATH]
'use strict';
const assert = require('node:assert/strict');
const path = require('node:path');
const fs = require('node:fs');
const {chromium} = require('playwright-core');
const cspCheck = require(path.join(__dirname, '..', 'browser', 'csp_check.js'));

function parseArgs(argv) {
  const args = {chromium: '/usr/bin/chromium'};
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, '')] = argv[i + 1];
  for (const k of ['url', 'screenshots', 'hostile-run', 'a', 'b', 'service', 'fix']) if (!args[k]) throw new Error(`--${k} is required`);
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
    await checkCsp(t);
    await shot('compare_timeline');

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
