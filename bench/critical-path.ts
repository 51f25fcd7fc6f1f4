/**
 * `npm run bench:critical-path`: how close any client can get to the
 * critical path of the 100x20 workload on this machine. The latency run of
 * `npm run bench` holds the gateway and the plain client to 1.25x the
 * critical path (2 dependent rounds x 20 ms); this makes the same 101 REST
 * calls to the same sandbox (bench/sandbox-process.ts, same latency) from
 * this process, with nothing after them: once reading the job pages as bytes
 * only (the floor: the calls and their transfer), once parsing them too.
 * Neither builds or sends a response, so both are lower bounds for either
 * client of `npm run bench`.
 *
 *   npm run bench:critical-path -- --latency 20 --runs 40
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const { values: flags } = parseArgs({ options: { latency: { type: 'string', default: '20' }, runs: { type: 'string', default: '40' } } });
const LATENCY_MS = Number(flags.latency);
const RUNS = Number(flags.runs);
const ROUNDS = 2;
const HEADERS = { 'private-token': 'demo-token' };

const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('sandbox-process.ts', import.meta.url))], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, NODE_ENV: 'production' },
});
const urls = await new Promise<{ gitlab: string; control: string }>((resolve, reject) => {
  child.once('exit', (code) => reject(new Error(`the sandbox exited with ${code}`)));
  createInterface({ input: child.stdout }).once('line', (line) => resolve(JSON.parse(line) as { gitlab: string; control: string }));
});
const pool = new Pool(urls.gitlab, { connections: 128 });

async function get(path: string, parse: boolean): Promise<unknown> {
  const response = await pool.request({ method: 'GET', path: `/api/v4/${path}`, headers: HEADERS });
  if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode}`);
  return parse ? response.body.json() : response.body.arrayBuffer();
}

/** One query's calls: the project page (parsed: its ids are needed), then the 100 job pages at once. */
async function query(parse: boolean): Promise<number> {
  const started = performance.now();
  const projects = (await get('projects?order_by=id&sort=asc&search=bulk-project&page=1&per_page=100&simple=true', true)) as { id: number }[];
  if (projects.length !== 100) throw new Error(`expected 100 projects, got ${projects.length}`);
  await Promise.all(projects.map((p) => get(`projects/${p.id}/jobs?page=1&per_page=20`, parse)));
  return performance.now() - started;
}

const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
try {
  await fetch(`${urls.control}/latency?ms=${LATENCY_MS}`, { method: 'PUT' });
  const times: Record<'bytes' | 'parsed', number[]> = { bytes: [], parsed: [] };
  for (let i = 0; i < 3; i++) await query(true);
  // Alternating, so both see the same machine.
  for (let i = 0; i < RUNS; i++) for (const mode of ['bytes', 'parsed'] as const) times[mode].push(await query(mode === 'parsed'));
  const critical = ROUNDS * LATENCY_MS;
  console.log(`100x20 calls at ${LATENCY_MS} ms per call, 1 client, p50 of ${RUNS}; critical path ${critical} ms (target: 1.25x = ${1.25 * critical} ms)`);
  for (const mode of ['bytes', 'parsed'] as const) {
    const ms = p50(times[mode]);
    console.log(
      `  ${mode === 'bytes' ? 'calls, job pages read as bytes' : 'calls, job pages parsed       '}: ${ms.toFixed(1)} ms = ${(ms / critical).toFixed(2)}x`,
    );
  }
} finally {
  await pool.close();
  child.kill('SIGTERM');
}
