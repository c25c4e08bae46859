// Checks for the harness's own hand-made pages.
module.exports = async (t) => {
  await t.check('paragraph exists', async () => {
    t.assert.ok(await t.page.$('#x'));
  });
};
