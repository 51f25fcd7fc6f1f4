/** A benchmark's processes: how they are built, and what /proc says about them (Linux only). */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** User and system CPU time of a process so far, in ms (its own, not its children's). */
export function cpuMs(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count from the closing parenthesis. Fields 14 and 15 of proc(5).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
}

/**
 * Builds what the benchmarks run on plain node: the gateway as `npm run
 * build` makes it, and the bench's own processes (sandbox front, plain
 * client, Yoga reference, dashboard floor) from bench/tsconfig.json.
 * `root`: the checkout; `quiet`: only the compilers' errors are shown.
 */
export function buildForBench(root: string | URL, quiet = false): void {
  for (const args of [
    ['run', 'build'],
    ['exec', '--', 'tsc', '-p', 'bench/tsconfig.json'],
  ]) {
    const build = spawnSync('npm', args, { cwd: root, stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit' });
    if (build.status !== 0) throw new Error(`npm ${args.join(' ')} failed`);
  }
}
