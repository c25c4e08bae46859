// The flame graph of `aiprof diff A B --flame` (the diff's own alignment):
// the summary names its frames as aligned diff nodes.
module.exports = (t) => require('./flame_checks.js').run(t, {query: 'conv', diff: true, calls: true, name: 'flame_from_diff'});
