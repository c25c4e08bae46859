// Browser checks of the pages rendered from documents (src/render/renderers.h
// through the page shell): diagnose/suggest/validate --format html and the
// cluster report, written from the hand-made hostile-names trace. The CSP
// itself is checked by csp_check.js (run for every page by check_page.js).
'use strict';

module.exports = async (t) => {
  const {page, assert} = t;
  await t.check('the page has a heading and content', async () => {
    const h1 = await page.$eval('h1', (e) => e.textContent);
    assert.match(h1, /aiprof/);
    const blocks = await page.$$eval('table, dl, .f, .finding, p', (els) => els.length);
    assert.ok(blocks > 0, 'an empty page');
  });
  await t.check('a table wider than the page scrolls in its own box', async () => {
    const r = await page.evaluate(() => {
      const tables = Array.from(document.querySelectorAll('table'));
      return {
        loose: tables.filter((e) => !e.parentElement.matches('div.table')).length,
        over: tables.map((e) => e.parentElement.getBoundingClientRect().right - document.documentElement.clientWidth)
          .filter((d) => d > 0),
        page: document.documentElement.scrollWidth, view: window.innerWidth,
      };
    });
    assert.equal(r.loose, 0, 'a table outside div.table');
    assert.deepEqual(r.over, [], 'a table box runs past the window (px)');
    assert.ok(r.page <= r.view, `the page is ${r.page} px wide in a ${r.view}-px window`);
  });
  await t.check('hostile names stay text', async () => {
    const injected = await page.$$eval('img, svg[onload], script:not([type])', (els) =>
      els.filter((e) => e.tagName !== 'SCRIPT' || e.textContent.includes('alert')).length);
    assert.equal(injected, 0, 'markup from the trace became elements');
    const text = await page.evaluate(() => document.body.textContent);
    assert.ok(/<img src=x onerror=alert\(1\)>|<script>alert|<svg onload=alert\(2\)>/.test(text) ||
              /hostile_names/.test(text), 'no trace text on the page');
  });
};
