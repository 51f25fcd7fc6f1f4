/**
 * `npm run bench`: the query benchmark (run.ts) with whatever flags were
 * given, then the subscription, stream, job-log and fleet-polls benchmarks with theirs by default.
 * One entry, so that `npm run bench -- --only projects-jobs-100x20` reaches
 * run.ts: npm appends its arguments to the end of the script line. With
 * --only, just the query benchmark runs.
 */
import { spawnSync } from 'node:child_process';

const ROOT = new URL('../', import.meta.url);
const args = process.argv.slice(2);

function run(script: string, scriptArgs: string[]): void {
  const result = spawnSync(process.execPath, [...process.execArgv, script, ...scriptArgs], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

run('bench/run.ts', args);
if (!args.some((arg) => arg === '--only' || arg.startsWith('--only='))) {
  run('bench/subscriptions.ts', ['--no-build']);
  run('bench/streams.ts', ['--no-build']);
  run('bench/job-log.ts', ['--no-build']);
  run('bench/fleet-polls.ts', ['--no-build']);
}
