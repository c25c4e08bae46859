// The flame graph of test/browser/data/bidi_names.json (hand-made): a name
// holding U+202E (right-to-left override) is shown with the visible text
// \u202e, so it cannot read as "rtlnosj.jpg" (the page's data escapes it,
// AppendDisplayJsonEscaped; the script sets names with textContent).
'use strict';
module.exports = async (t) => {
  const {page, assert} = t;
  await t.check('a bidi override in a name is shown as text, not obeyed', async () => {
    const texts = await page.$$eval('#flame .frame', (els) => els.map((e) => e.textContent));
    assert.ok(texts.includes('rtl\\u202egpj.json'), `frames: ${JSON.stringify(texts)}`);
    assert.ok(!texts.some((s) => s.includes('\u202e')), 'a frame holds U+202E itself');
  });
};
