/** What /proc says about a benchmark's processes (Linux only). */
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
