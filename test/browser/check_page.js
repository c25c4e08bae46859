// Loads one HTML view in headless Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core over the DevTools protocol) and runs a view's
// checks on it. Fails (exit 1) on any console error, uncaught page error,
// dialog (alert/confirm/prompt: injected script ran), or network request
// other than the page itself (views must be self-contained and offline).
//
//   node check_page.js --html FILE --checks CHECKS.js --screenshot OUT.png
//                      [--chromium PATH] [--viewport 1280x800] [--csp require|skip]
//
// Every aiprof page must carry the shared Content-Security-Policy
// (csp_check.js runs before the view's checks); only the harness's own
// self-test pages skip it (--csp skip).
//
// CHECKS.js exports `async function (t)`, where t has:
//   t.page              the Playwright Page (t.page.evaluate, .click, .type, .$$ ...)
//   t.assert            node:assert (strict)
//   t.check(name, fn)   runs one named check (await it); failures name the check
//   t.screenshot(file)  saves a PNG of the page now (beside --screenshot when relative)
//   t.errors            the console/page errors collected so far
'use strict';
const assert = require('node:assert/strict');
const path = require('node:path');
const fs = require('node:fs');
const {chromium} = require('playwright-core');

function parseArgs(argv) {
  const args = {chromium: '/usr/bin/chromium', viewport: '1280x800', csp: 'require'};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (i + 1 >= argv.length) throw new Error(`missing value for ${argv[i]}`);
    args[key] = argv[i + 1];
  }
  for (const k of ['html', 'checks', 'screenshot']) {
    if (!args[k]) throw new Error(`--${k} is required`);
  }
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const html = path.resolve(args.html);
  if (!fs.existsSync(html)) throw new Error(`no such page: ${html}`);
  const checks = require(path.resolve(args.checks));
  const [width, height] = args.viewport.split('x').map(Number);
  const launchArgs = ['--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--allow-file-access-from-files'];
  if (process.getuid && process.getuid() === 0) launchArgs.push('--no-sandbox');
  const browser = await chromium.launch({executablePath: args.chromium, headless: true, args: launchArgs});
  const errors = [];
  let passed = 0;
  try {
    const page = await browser.newPage({viewport: {width, height}});
    const pageUrl = 'file://' + html;
    page.on('console', (msg) => {
      if (msg.type() === 'error') errors.push(`console error: ${msg.text()}`);
    });
    page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
    page.on('dialog', async (dialog) => {
      errors.push(`dialog (${dialog.type()}): ${dialog.message()} - script from the page's data ran`);
      await dialog.dismiss();
    });
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url === pageUrl || url.startsWith('data:') || url === 'about:blank') return route.continue();
      errors.push(`request to ${url}: a view must be self-contained`);
      return route.abort();
    });
    await page.goto(pageUrl, {waitUntil: 'load', timeout: 60000});
    await page.screenshot({path: args.screenshot});
    const t = {
      page, assert, errors,
      async check(name, fn) {
        try {
          await fn();
        } catch (e) {
          e.message = `check '${name}' failed: ${e.message}` +
              (errors.length ? `\n  errors in the page so far:\n  ${errors.join('\n  ')}` : '');
          throw e;
        }
        ++passed;
        console.log(`  ok: ${name}`);
      },
      async screenshot(file) {
        const out = path.isAbsolute(file) ? file : path.join(path.dirname(path.resolve(args.screenshot)), file);
        await page.screenshot({path: out});
      },
    };
    if (args.csp !== 'skip') await require('./csp_check.js').checkCsp(t);
    await checks(t);
    // Let late errors (timers, animation frames) surface.
    await new Promise((r) => setTimeout(r, 200));
  } finally {
    await browser.close();
  }
  if (errors.length) throw new Error(`${errors.length} error(s) in the page:\n  ` + errors.join('\n  '));
  console.log(`browser checks of ${path.basename(html)}: ${passed} passed, 0 failed`);
}

main().catch((e) => {
  console.error(`FAILED: ${e.stack || e}`);
  process.exit(1);
});
