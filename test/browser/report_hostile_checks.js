// `aiprof report` of test/browser/data/hostile_names.json (hand-made names with markup).
module.exports = (t) => require('./report_checks.js').run(t, {hostile: true});
