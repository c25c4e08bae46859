// The flame graph of the shipped AlexNet A100 trace (cpu ops over CUDA runtime calls).
module.exports = (t) => require('./flame_checks.js').run(t, {query: 'cudaLaunchKernel', name: 'flame_alexnet'});
