/**
 * Two builds of the gateway side by side: the same workload against one
 * bench sandbox, in alternating slices (A then B, then B then A, ...), so a
 * machine that speeds up or slows down during the run weighs on both alike.
 * Prints each build's gateway CPU per request (user + system, from /proc)
 * per slice, their medians and B/A. Meant for a change whose effect is
 * smaller than what separate runs of `npm run bench` differ by.
 *
 *   npm run bench:ab -- --a <rev> --b <rev|.> [--workload projects-jobs-100x20] [--slices 12] [--requests 20] [--clients 1]
 *
 * A revision is checked out in a worktree under the system's temporary
 * folder and built there (node_modules linked to this one's); `.` is this
 * checkout, built by `npm run build`. The gateways run with the cache off
 * (CACHE_MAX_AGE_MS=0) unless --env says otherwise (--env K=V, repeatable,
 * applies to B only: one build, two settings, with --a . --b .).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuMs } from './proc.js';
import { gatewayCredentials, loadWorkloads } from './workloads.js';

const { values } = parseArgs({
  options: {
    a: { type: 'string', default: 'HEAD' },
    b: { type: 'string', default: '.' },
    workload: { type: 'string', default: 'projects-jobs-100x20' },
    slices: { type: 'string', default: '12' },
    requests: { type: 'string', default: '20' },
    clients: { type: 'string', default: '1' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const ROOT = fileURLToPath(new URL('..', import.meta.url));

function run(command: string, args: string[], cwd: string): void {
  const result = spawnSync(command, args, { cwd, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed in ${cwd}`);
}

/** A folder holding a built gateway at `rev`. */
function built(rev: string): string {
  if (rev === '.') {
    run('npm', ['run', '--silent', 'build'], ROOT);
    return ROOT;
  }
  const sha = spawnSync('git', ['rev-parse', '--short', rev], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  if (!sha) throw new Error(`no revision ${rev}`);
  const dir = join(tmpdir(), 'duograph-ab', sha);
  if (!existsSync(dir)) {
    mkdirSync(join(tmpdir(), 'duograph-ab'), { recursive: true });
    run('git', ['worktree', 'add', '--detach', dir, sha], ROOT);
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  }
  if (!existsSync(join(dir, 'dist/src/main.js'))) run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], dir);
  return dir;
}

/** Starts `args` in `cwd` and resolves with the first match of `ready` in its output. */
function start(cwd: string, args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, NODE_ENV: 'production', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
    createInterface({ input: child.stdout as NonNullable<ChildProcess['stdout']> }).on('line', (line) => {
      const match = ready.exec(line);
      if (match) resolve({ child, match });
    });
  });
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

const found = (await loadWorkloads()).find((w) => w.name === values.workload);
if (!found) throw new Error(`no workload ${values.workload}`);
const workload = found;
const dirs = [built(values.a), built(values.b)];
// The sandbox front, compiled as bench/run.ts compiles it.
run('npm', ['exec', '--', 'tsc', '-p', 'bench/tsconfig.json'], ROOT);
const sandbox = await start(ROOT, ['dist/bench/sandbox-process.js'], {}, /^(\{.*\})$/);
const upstreams = JSON.parse(sandbox.match[1] ?? '{}') as Record<string, string>;
const extra = Object.fromEntries(values.env.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
const gateways = await Promise.all(
  dirs.map((dir, i) =>
    start(
      dir,
      ['dist/src/main.js', 'serve'],
      {
        GITLAB_URL: upstreams.gitlab ?? '',
        HUBZILLA_URL: upstreams.hubzilla ?? '',
        PORT: '0',
        HOST: '127.0.0.1',
        CACHE_MAX_AGE_MS: '0',
        ...(i === 1 ? extra : {}),
      },
      /GraphiQL at (\S+)/,
    ),
  ),
);
const clients = Number(values.clients);
const requests = Number(values.requests);

/** Gateway `i`'s CPU ms per request over one slice of `requests` requests from each client. */
async function slice(i: number): Promise<number> {
  const { child, match } = gateways[i] as (typeof gateways)[number];
  const before = cpuMs(child.pid);
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let n = 0; n < requests; n++) {
        const response = await fetch(match[1] ?? '', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...gatewayCredentials(workload, client) },
          body: JSON.stringify({ query: workload.query }),
        });
        const body = (await response.json()) as { errors?: unknown };
        if (body.errors) throw new Error(`gateway ${'AB'[i]} answered errors: ${JSON.stringify(body.errors).slice(0, 300)}`);
      }
    }),
  );
  return (cpuMs(child.pid) - before) / (clients * requests);
}

try {
  // One slice each to warm both up (JIT, connections), not counted.
  await slice(0);
  await slice(1);
  const ms: [number[], number[]] = [[], []];
  for (let n = 0; n < Number(values.slices); n++) {
    for (const i of n % 2 ? [1, 0] : [0, 1]) ms[i as 0 | 1].push(await slice(i));
    console.log(`slice ${n + 1}: A ${ms[0].at(-1)?.toFixed(1)} ms, B ${ms[1].at(-1)?.toFixed(1)} ms`);
  }
  const [a, b] = [median(ms[0]), median(ms[1])];
  console.log(
    `${workload.name}, ${clients} client(s): gateway CPU per request, median of ${values.slices} slices: A (${values.a}) ${a.toFixed(1)} ms, B (${values.b}) ${b.toFixed(1)} ms, B/A ${(b / a).toFixed(3)}`,
  );
} finally {
  for (const { child } of [...gateways, sandbox]) child.kill('SIGTERM');
}
