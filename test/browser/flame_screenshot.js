// Not a test: makes docs/img/flame_alexnet.png (see docs/views.md):
//   build/aiprof view test/data/alexnet_a100_kineto.json.gz --flame -o /tmp/flame.html
//   NODE_PATH=build/browser/node_modules node test/browser/check_page.js --html /tmp/flame.html \
//     --checks test/browser/flame_screenshot.js --screenshot docs/img/flame_alexnet_initial.png
// (the page as loaded goes to --screenshot; this saves the searched, hovered state beside it).
module.exports = async (t) => {
  await t.page.type('#search', 'conv');
  const f = await t.page.evaluate(() => {
    const m = window.aiprofFlame.main, d = window.aiprofFlame.data;
    for (let i = 1; i < m.n; i++) if (d.names[m.name[i]] === 'aten::convolution') return i;
    return 1;
  });
  await t.page.hover(`#flame .frame[data-f="${f}"]`);
  await t.screenshot('flame_alexnet.png');
};
