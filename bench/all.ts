/**
 * `npm run bench`: the query benchmark (run.ts) with whatever flags were
 * given, then the subscription, stream, job-log, fleet-polls and tracing benchmarks with theirs by default.
 * One entry, so that `npm run bench -- --only projects-jobs-100x20` reaches
 * run.ts: npm appends its arguments to the end of the script line. With
 * --only, just the query benchmark runs.
 */
import { spawnSync } from 'node:child_process';

const ROOT = new URL('../', import.meta.url);
const given = process.argv.slice(2);
// --node <binary> (or BENCH_NODE): every benchmark, and every process it starts, runs on that Node.js instead of this one.
const nodeAt = given.findIndex((arg) => arg === '--node' || arg.startsWith('--node='));
const node =
  nodeAt < 0
    ? (process.env.BENCH_NODE ?? process.execPath)
    : given[nodeAt]?.startsWith('--node=')
      ? given[nodeAt].slice('--node='.length)
      : (given[nodeAt + 1] ?? '');
const args = nodeAt < 0 ? given : given.filter((_, i) => i !== nodeAt && (given[nodeAt]?.includes('=') || i !== nodeAt + 1));
const version = spawnSync(node, ['--version'], { encoding: 'utf8' });
if (version.status !== 0) throw new Error(`--node ${node}: not a Node.js binary`);
console.log(`Benchmarks on Node.js ${version.stdout.trim()} (${node})`);

function run(script: string, scriptArgs: string[]): void {
  // The benchmarks start their servers with their own process.execPath: the same Node.js.
  const result = spawnSync(node, [...process.execArgv, script, ...scriptArgs], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

run('bench/run.ts', args);
if (!args.some((arg) => arg === '--only' || arg.startsWith('--only='))) {
  run('bench/subscriptions.ts', ['--no-build']);
  run('bench/streams.ts', ['--no-build']);
  run('bench/job-log.ts', ['--no-build']);
  run('bench/fleet-polls.ts', ['--no-build']);
  run('bench/tracing.ts', ['--no-build']);
}
