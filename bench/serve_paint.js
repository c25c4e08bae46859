// `aiprof serve` in headless Chromium: time to first contentful paint of a
// run's page and of its timeline (whole run, then windows of 1/10, 1/100 and
// 1/1000 of it at random places, as a person zooming in), each page loaded
// in a fresh browser context (nothing cached). Prints JSON: per page kind,
// the median and max of FCP and of the server's answer (responseEnd), in ms,
// and the bytes of each timeline page. Run by bench/serve_benchmark.py
// --browser; playwright-core from the browser tests' node_modules (NODE_PATH).
//
//   node serve_paint.js --url http://127.0.0.1:PORT --run ID --span NS [--repeats 5] [--chromium PATH]
'use strict';
const {chromium} = require('playwright-core');

function parseArgs(argv) {
  const args = {chromium: '/usr/bin/chromium', repeats: '5'};
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, '')] = argv[i + 1];
  for (const k of ['url', 'run', 'span']) if (!args[k]) throw new Error(`--${k} is required`);
  return args;
}

// A small deterministic generator (the windows are the same on every run).
function rng(seed) {
  let x = seed >>> 0;
  return () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 4294967296);
}

async function load(browser, url) {
  const context = await browser.newContext({viewport: {width: 1280, height: 900}});
  const page = await context.newPage();
  const response = await page.goto(url, {waitUntil: 'load', timeout: 120000});
  const bytes = (await response.body()).length;
  // The paint entry may land just after 'load'.
  const t = await page.evaluate(() => new Promise((resolve) => {
    const read = () => {
      const fcp = performance.getEntriesByName('first-contentful-paint')[0];
      const nav = performance.getEntriesByType('navigation')[0];
      if (fcp) resolve({fcp: fcp.startTime, response: nav.responseEnd});
      else setTimeout(read, 20);
    };
    read();
  }));
  await context.close();
  return {...t, bytes, status: response.status()};
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor((s.length - 1) / 2)]; };

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const launchArgs = ['--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--no-proxy-server'];
  if (process.getuid && process.getuid() === 0) launchArgs.push('--no-sandbox');
  const browser = await chromium.launch({executablePath: args.chromium, headless: true, args: launchArgs});
  const span = Number(args.span);
  const next = rng(1);
  const kinds = {run_page: [], timeline_whole: [], timeline_1_10: [], timeline_1_100: [], timeline_1_1000: []};
  try {
    for (let r = 0; r < Number(args.repeats); ++r) {
      kinds.run_page.push(await load(browser, `${args.url}/runs/${args.run}`));
      kinds.timeline_whole.push(await load(browser, `${args.url}/runs/${args.run}/timeline`));
      for (const frac of [10, 100, 1000]) {
        const len = Math.max(1, Math.floor(span / frac));
        const start = Math.floor(next() * Math.max(1, span - len));
        kinds[`timeline_1_${frac}`].push(await load(browser, `${args.url}/runs/${args.run}/timeline?start=${start}&end=${start + len}`));
      }
    }
  } finally {
    await browser.close();
  }
  const out = {};
  for (const [k, xs] of Object.entries(kinds)) {
    if (xs.some((x) => x.status !== 200)) throw new Error(`${k}: status ${xs.map((x) => x.status)}`);
    out[k] = {fcp_p50_ms: median(xs.map((x) => x.fcp)), fcp_max_ms: Math.max(...xs.map((x) => x.fcp)),
              response_p50_ms: median(xs.map((x) => x.response)), bytes_max: Math.max(...xs.map((x) => x.bytes))};
  }
  console.log(JSON.stringify(out, null, 1));
}

main().catch((e) => {
  console.error(`FAILED: ${e.stack || e}`);
  process.exit(1);
});
