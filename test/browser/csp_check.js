// The Content-Security-Policy every aiprof page carries (src/render/page.h),
// checked on the loaded page by check_page.js before a view's own checks:
//  1. exactly one CSP meta, first in <head> (before any trace text), strict:
//     default-src 'none', no 'unsafe-inline' or 'unsafe-eval' for scripts,
//     img-src data: only, base-uri 'none', form-action 'none';
//  2. every inline executable <script> of the page (and of each srcdoc frame
//     it embeds) is allowed by its SHA-256, computed here independently;
//  3. the browser enforces it: an inline event handler and an inline script
//     injected into the live page do not run, and Chromium reports each as a
//     CSP violation (those two reports are the only errors this probe may
//     add; they are removed from t.errors once seen).
'use strict';
const crypto = require('node:crypto');

function sha256(text) {
  return `'sha256-${crypto.createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

// The policy's directives as {name: [sources]}.
function parsePolicy(policy) {
  const out = {};
  for (const part of policy.split(';')) {
    const words = part.trim().split(/\s+/).filter(Boolean);
    if (words.length) out[words[0]] = words.slice(1);
  }
  return out;
}

async function inlineScriptsOf(page) {
  return page.evaluate(() => {
    const executable = (s) => !s.src && (!s.type || /^(text|application)\/(java|ecma)script$|^module$/i.test(s.type));
    const scripts = [];
    const collect = (doc) => {
      for (const s of doc.querySelectorAll('script')) if (executable(s)) scripts.push(s.textContent);
    };
    collect(document);
    // Frames from srcdoc inherit this page's policy: their scripts count too.
    for (const f of document.querySelectorAll('iframe[srcdoc]')) {
      collect(new DOMParser().parseFromString(f.getAttribute('srcdoc'), 'text/html'));
    }
    return scripts;
  });
}

async function checkCsp(t) {
  const {page, assert} = t;
  await t.check('the page carries the shared Content-Security-Policy', async () => {
    const metas = await page.evaluate(() =>
      [...document.querySelectorAll('meta[http-equiv="Content-Security-Policy" i]')].map((m) => ({
        content: m.content, inHead: m.parentElement === document.head,
        beforeTitle: !document.title || !!(m.compareDocumentPosition(document.querySelector('title')) &
                                           Node.DOCUMENT_POSITION_FOLLOWING)})));
    assert.equal(metas.length, 1, `one CSP meta expected, found ${metas.length}`);
    assert.ok(metas[0].inHead && metas[0].beforeTitle, 'the CSP meta comes first in <head>');
    const p = parsePolicy(metas[0].content);
    assert.deepEqual(p['default-src'], ["'none'"]);
    assert.deepEqual(p['img-src'], ['data:']);
    assert.deepEqual(p['base-uri'], ["'none'"]);
    assert.deepEqual(p['form-action'], ["'none'"]);
    const scriptSrc = p['script-src'] || [];
    for (const bad of ["'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", '*', 'data:', 'http:', 'https:']) {
      assert.ok(!scriptSrc.includes(bad), `script-src must not allow ${bad}`);
    }
    for (const d of Object.keys(p)) {
      assert.ok(['default-src', 'script-src', 'style-src', 'img-src', 'base-uri', 'form-action'].includes(d),
                `unexpected directive ${d}`);
    }
    const scripts = await inlineScriptsOf(page);
    for (const s of scripts) {
      assert.ok(scriptSrc.includes(sha256(s)), `an inline script (${s.slice(0, 40)}...) is not allowed by its hash`);
    }
    t.cspScripts = scripts.length;
  });
  await t.check('an injected inline handler and script do not run', async () => {
    const before = t.errors.length;
    const ran = await page.evaluate(async () => {
      window.__aiprofInjected = [];
      const div = document.createElement('div');
      div.setAttribute('onclick', 'window.__aiprofInjected.push("handler")');
      document.body.appendChild(div);
      div.click();
      const s = document.createElement('script');
      s.textContent = 'window.__aiprofInjected.push("script")';
      document.body.appendChild(s);
      await new Promise((r) => setTimeout(r, 50));
      div.remove();
      s.remove();
      return window.__aiprofInjected;
    });
    assert.deepEqual(ran, [], `injected code ran: ${ran}`);
    const added = t.errors.splice(before);
    const violations = added.filter((e) => /Content Security Policy/.test(e));
    assert.equal(violations.length, added.length, `the probe caused other errors: ${added}`);
    assert.ok(violations.some((e) => /inline event handler/i.test(e)), `no CSP report for the handler: ${added}`);
    assert.ok(violations.some((e) => /inline script/i.test(e)), `no CSP report for the script: ${added}`);
  });
}

module.exports = {checkCsp, sha256};
