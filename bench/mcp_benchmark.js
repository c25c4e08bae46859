// aiprof mcp on a large trace, through the official MCP TypeScript SDK's
// client (@modelcontextprotocol/sdk, installed by the mcp_npm_install test
// fixture into <build>/mcp/node_modules). Not run by CI.
//
//   python3 bench/make_large_trace.py /tmp/large.json --mb 600
//   NODE_PATH=build/mcp/node_modules node bench/mcp_benchmark.js --aiprof build/aiprof --trace /tmp/large.json
//
// Reports wall times seen by the client (best of --repeat for the queries):
// the server's start and initialize, load_trace (import + query tables), a
// time-range query (`WHERE ts BETWEEN`, pushed down to the columns), a full
// count, summary and diagnose (first call: the analyses run; second: cached in
// the trace's session), and the size of each reply. Each figure is one
// request's round trip, from the SDK's request to its parsed reply.
'use strict';
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

function parseArgs(argv) {
  const out = { repeat: '3' };
  for (let i = 0; i < argv.length; i += 2) out[argv[i].replace(/^--/, '')] = argv[i + 1];
  if (!out.aiprof || !out.trace) throw new Error('usage: mcp_benchmark.js --aiprof AIPROF --trace FILE [--repeat N]');
  return out;
}

const kLong = { timeout: 30 * 60 * 1000 };  // the SDK's default is 60 s

async function timed(label, fn) {
  const t0 = performance.now();
  const r = await fn();
  const s = (performance.now() - t0) / 1000;
  const bytes = JSON.stringify(r).length;
  console.log(`${label.padEnd(44)} ${s.toFixed(3).padStart(8)} s   reply ${(bytes / 1024).toFixed(1)} KiB`);
  return { r, s };
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const trace = path.resolve(a.trace);
  const t0 = performance.now();
  const transport = new StdioClientTransport({ command: a.aiprof, args: ['mcp', '--allow', path.dirname(trace)] });
  const client = new Client({ name: 'aiprof-mcp-benchmark', version: '1.0.0' });
  await client.connect(transport);
  console.log(`${'start + initialize'.padEnd(44)} ${((performance.now() - t0) / 1000).toFixed(3).padStart(8)} s`);
  const call = (name, args) => client.callTool({ name, arguments: args }, undefined, kLong);

  const load = await timed('load_trace', () => call('load_trace', { path: trace }));
  if (load.r.isError) throw new Error(load.r.content[0].text);
  const tid = load.r.structuredContent.trace;
  console.log(`  ${load.r.content[0].text}`);
  const bounds = (await call('query', { trace: tid, sql: 'SELECT min(ts), max(ts + dur) FROM slices' }))
                     .structuredContent.rows[0];
  const mid = Math.floor((bounds[0] + bounds[1]) / 2);
  const queries = [
    ['query: ts BETWEEN (10 ms window), count', `SELECT count(*), sum(dur) FROM slices WHERE ts BETWEEN ${mid} AND ${mid + 10000000}`],
    ['query: count(*) over all slices', 'SELECT count(*) FROM slices'],
    ['query: top 10 names by total time', 'SELECT name, sum(dur) AS t FROM slices GROUP BY name ORDER BY t DESC LIMIT 10'],
  ];
  for (const [label, sql] of queries) {
    let best = Infinity, rows = null;
    for (let k = 0; k < Number(a.repeat); ++k) {
      const { r, s } = await timed(`${label} #${k + 1}`, () => call('query', { trace: tid, sql }));
      if (r.isError) throw new Error(r.content[0].text);
      best = Math.min(best, s);
      rows = r.structuredContent.rows;
    }
    console.log(`  best ${best.toFixed(3)} s; first row ${JSON.stringify(rows[0])}`);
  }
  await timed('summary (first call)', () => call('summary', { trace: tid }));
  await timed('summary (again: cached in the session)', () => call('summary', { trace: tid }));
  await timed('diagnose (first call)', () => call('diagnose', { trace: tid }));
  await timed('diagnose (again)', () => call('diagnose', { trace: tid }));
  await timed('whatif remove-idle other', () => call('whatif', { trace: tid, scenario: 'remove-idle other' }));
  await client.close();
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
