// The differential flame graph page (aiprof view --flame --diff BASELINE).
module.exports = (t) => require('./flame_checks.js').run(t, {query: 'conv', diff: true, name: 'flame_diff'});
