// The flame graph of test/browser/data/hostile_names.json (hand-made names with markup).
module.exports = (t) => require('./flame_checks.js').run(t, {query: 'script', hostile: true, minFrames: 4, name: 'flame_hostile'});
