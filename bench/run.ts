/**
 * `npm run bench`: the gateway against a plain REST client on every workload
 * under bench/workloads, in one run on this machine. Loopback only, bounded in
 * time. Three processes besides this one (the load generator):
 *
 *   sandbox   bench/sandbox-process.ts: sandbox GitLab + Hubzilla with the bench
 *             seed behind a front that adds latency, counts calls and memoizes
 *             answers (the seed never moves; --render renders every answer)
 *   gateway   the built gateway, `node dist/src/main.js serve`, pointed at the sandbox
 *   plain     bench/plain-client.ts: the same REST calls by hand with undici,
 *             the same JSON back (the test bench-workloads checks both)
 *   yoga      bench/yoga-reference.ts, for the workloads it knows (the 100x20
 *             dashboard): a hand-made graphql-yoga server with an undici Pool
 *             and a DataLoader per request, what a team would write itself
 * All three run compiled (npm run build, and bench/tsconfig.json for the bench's own).
 *
 * For each workload, with a fresh gateway and plain client: throughput runs at
 * sandbox latency 0, at each concurrency (default 1 and 16), the gateway and
 * the plain client in alternating rounds (default 2), each warmed up and
 * then driven for a fixed time a round; then the same at sandbox latency L
 * (default 20 ms), its p50 with one client against the critical path
 * (rounds x L). Every client has a GitLab token of its own (workloads.ts).
 * Per run: requests/s, p50/p99, CPU ms per request of the server process
 * (utime+stime from /proc/<pid>/stat), its peak RSS during the run (VmHWM,
 * reset through /proc/<pid>/clear_refs), and upstream calls per request from
 * the sandbox's counter. Prints one table and the targets, and writes
 * bench/results/latest.json and latest.md.
 *
 *   npm run bench -- --seconds 2.5 --rounds 2 --warmup 0.5 --concurrency 1,16 --latency 20
 *   npm run bench -- --only projects-jobs-100x20 --profile   (gateway and plain client under node --cpu-prof;
 *                                                             then npx tsx bench/profile-summary.ts [gateway|plain])
 *   npm run bench -- --node-options=--max-semi-space-size=64  (NODE_OPTIONS of every server process)
 *   npm run bench -- --only projects-jobs-100x20 --concurrency 16 --workers 2   (WORKERS=2: CPU summed over the workers)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { Pool } from 'undici';
import { YOGA_OPERATIONS } from './plain/yoga.js';
import { buildForBench, cpuMs as processCpuMs } from './proc.js';
import { gatewayCredentials, loadWorkloads, type Workload } from './workloads.js';

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '2.5' },
    warmup: { type: 'string', default: '0.5' },
    concurrency: { type: 'string', default: '1,16' },
    latency: { type: 'string', default: '20' },
    connections: { type: 'string', default: '128' },
    rounds: { type: 'string', default: '2' },
    only: { type: 'string' },
    profile: { type: 'boolean', default: false },
    render: { type: 'boolean', default: false },
    'node-options': { type: 'string', default: '' },
    'no-build': { type: 'boolean', default: false },
    /** Gateway processes (WORKERS): CPU and memory are then the whole process tree's. */
    workers: { type: 'string', default: '1' },
  },
});
const SECONDS = Number(flags.seconds);
const WARMUP = Number(flags.warmup);
const CONCURRENCIES = String(flags.concurrency).split(',').map(Number);
const LATENCY_MS = Number(flags.latency);
const CONNECTIONS = Number(flags.connections);
const ROUNDS = Number(flags.rounds);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`--rounds takes a whole number of at least 1, not "${flags.rounds}"`);
const ROOT = new URL('../', import.meta.url);
const RESULTS = new URL('bench/results/', ROOT);

// --- processes -------------------------------------------------------------------

interface Server {
  name: string;
  pid: number;
  /** What the process printed as ready, parsed. */
  ready: Record<string, string>;
  stop(): Promise<void>;
}

/** Spawns a process and resolves once `parseReady` accepts a line of its stdout. */
function startProcess(name: string, args: string[], env: Record<string, string>, parseReady: (line: string) => Record<string, string> | null): Promise<Server> {
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: new URL('.', ROOT),
    env: { ...process.env, NODE_ENV: 'production', NODE_OPTIONS: flags['node-options'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 30 s`)), 30_000);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before it was ready`)));
    if (!child.stdout) throw new Error(`${name} has no stdout`);
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      const ready = parseReady(line);
      if (!ready) return;
      clearTimeout(timer);
      resolve({
        name,
        pid: child.pid ?? 0,
        ready,
        async stop() {
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

const json = (line: string): Record<string, string> | null => (line.startsWith('{') ? (JSON.parse(line) as Record<string, string>) : null);

function startSandbox(): Promise<Server> {
  return startProcess('sandbox', ['dist/bench/sandbox-process.js', ...(flags.render ? ['--render'] : [])], {}, json);
}

/** node flags that write a CPU profile of the process to bench/results/profiles/<name>/ on exit, with --profile. */
function profileFlags(name: string): string[] {
  return flags.profile ? ['--cpu-prof', `--cpu-prof-dir=${new URL(`profiles/${name}/`, RESULTS).pathname}`] : [];
}

function startGateway(upstreams: Record<string, string>): Promise<Server> {
  return startProcess(
    'gateway',
    [...profileFlags('gateway'), 'dist/src/main.js', 'serve'],
    {
      GITLAB_URL: upstreams.gitlab ?? '',
      HUBZILLA_URL: upstreams.hubzilla ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      UPSTREAM_CONNECTIONS: String(CONNECTIONS),
      UPSTREAM_MAX_CONCURRENCY: String(CONNECTIONS),
      WORKERS: String(flags.workers),
      // Measured here: the work of answering a query. The answer cache would answer most repeats with none
      // (bench:dashboard measures that), and the plain client has no cache to compare with.
      CACHE_MAX_AGE_MS: '0',
    },
    (line) => {
      const url = /GraphiQL at (\S+)/.exec(line)?.[1];
      return url ? { url } : null;
    },
  );
}

function startYoga(upstreams: Record<string, string>): Promise<Server> {
  return startProcess(
    'yoga',
    [...profileFlags('yoga'), 'dist/bench/yoga-reference.js', '--gitlab', upstreams.gitlab ?? '', '--connections', String(CONNECTIONS)],
    {},
    json,
  );
}

function startPlain(upstreams: Record<string, string>): Promise<Server> {
  return startProcess(
    'plain',
    [
      ...profileFlags('plain'),
      'dist/bench/plain-client.js',
      '--gitlab',
      upstreams.gitlab ?? '',
      '--hubzilla',
      upstreams.hubzilla ?? '',
      '--connections',
      String(CONNECTIONS),
    ],
    {},
    json,
  );
}

// --- what /proc says about a process --------------------------------------------

/** The pids of a process's children, from every thread's /proc children list. */
async function childrenOf(pid: number): Promise<number[]> {
  const { readdir } = await import('node:fs/promises');
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  const lists = await Promise.all(tasks.map((task) => readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '')));
  return lists.flatMap((list) => list.split(' ').filter(Boolean).map(Number));
}

/** A process's own CPU time, in ms; a promise, so that a child that is gone rejects rather than throws. */
const ownCpuMs = async (pid: number): Promise<number> => processCpuMs(pid);

/** CPU time of a process and its children (a gateway's workers), in ms. */
async function treeCpuMs(pid: number): Promise<number> {
  const children = await childrenOf(pid);
  const times = await Promise.all([ownCpuMs(pid), ...children.map((child) => treeCpuMs(child).catch(() => 0))]);
  return times.reduce((a, b) => a + b, 0);
}

/** Resets the peak RSS (VmHWM) of a process and its children to their current RSS; false where the kernel does not allow it. */
async function resetPeakRss(pid: number): Promise<boolean> {
  try {
    await writeFile(`/proc/${pid}/clear_refs`, '5');
    for (const child of await childrenOf(pid)) await resetPeakRss(child);
    return true;
  } catch {
    return false;
  }
}

/** Peak RSS (VmHWM) in MB, summed over a process and its children (each one's own peak). */
async function peakRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const own = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) / 1024;
  const children = await Promise.all((await childrenOf(pid)).map((child) => peakRssMb(child).catch(() => 0)));
  return own + children.reduce((a, b) => a + b, 0);
}

// --- load ------------------------------------------------------------------------

interface Target {
  name: 'gateway' | 'plain' | 'yoga';
  server: Server;
  url: URL;
}

/** A client that posts one workload to a target over `concurrency` keep-alive connections. */
function loadClient(target: Target, workload: Workload, concurrency: number) {
  const pool = new Pool(target.url.origin, { connections: concurrency, pipelining: 1 });
  const body = JSON.stringify({ query: workload.query, operationName: workload.operationName });
  // Each client its own credentials: with the cache off nothing is shared between them, not even a read in flight.
  const headers = Array.from({ length: concurrency }, (_, i) => ({
    'content-type': 'application/json',
    accept: 'application/json',
    ...gatewayCredentials(workload, i),
  }));

  async function send(client = 0): Promise<string> {
    const response = await pool.request({ method: 'POST', path: target.url.pathname, headers: headers[client], body });
    const text = await response.body.text();
    if (response.statusCode !== 200 || !text.startsWith('{"data"') || text.includes('"errors":[')) {
      throw new Error(`${target.name} ${workload.name}: ${response.statusCode} ${text.slice(0, 300)}`);
    }
    return text;
  }

  /** Keeps `concurrency` requests in flight for `seconds`, then waits for the last ones; latencies in ms, sorted. */
  async function drive(seconds: number): Promise<{ latencies: number[]; elapsedS: number }> {
    const latencies: number[] = [];
    const started = performance.now();
    const deadline = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: concurrency }, async (_, client) => {
        while (performance.now() < deadline) {
          const t0 = performance.now();
          await send(client);
          latencies.push(performance.now() - t0);
        }
      }),
    );
    return { latencies: latencies.sort((a, b) => a - b), elapsedS: (performance.now() - started) / 1000 };
  }

  return { send, drive, close: () => pool.close() };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

interface Measurement {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  cpuMsPerRequest: number;
  sandboxCpuMsPerRequest: number;
  peakRssMb: number;
  callsPerRequest: number;
}

async function upstreamCalls(control: string): Promise<number> {
  const response = await fetch(`${control}/stats`);
  const counts = (await response.json()) as { gitlab: number; hubzilla: number };
  return counts.gitlab + counts.hubzilla;
}

/** What one round of driving a target measured. */
interface Round {
  latencies: number[];
  elapsedS: number;
  cpuMs: number;
  sandboxCpuMs: number;
  calls: number;
  peakRssMb: number;
}

/** One round: reset the counters, drive for SECONDS, read them again (warmed up first when asked). */
async function round(target: Target, workload: Workload, concurrency: number, sandbox: Server, warmup: boolean): Promise<Round> {
  const client = loadClient(target, workload, concurrency);
  try {
    if (warmup) await client.drive(WARMUP);
    const pid = target.server.pid;
    const rssReset = await resetPeakRss(pid);
    const [cpu0, sandboxCpu0, calls0] = [await treeCpuMs(pid), await treeCpuMs(sandbox.pid), await upstreamCalls(sandbox.ready.control ?? '')];
    const { latencies, elapsedS } = await client.drive(SECONDS);
    const [cpu1, sandboxCpu1, calls1] = [await treeCpuMs(pid), await treeCpuMs(sandbox.pid), await upstreamCalls(sandbox.ready.control ?? '')];
    return {
      latencies,
      elapsedS,
      cpuMs: cpu1 - cpu0,
      sandboxCpuMs: sandboxCpu1 - sandboxCpu0,
      calls: calls1 - calls0,
      peakRssMb: rssReset ? await peakRssMb(pid) : Number.NaN,
    };
  } finally {
    await client.close();
  }
}

/** Rounds of one target, added up: requests and time summed, latencies pooled, the highest peak RSS. */
function combine(rounds: Round[]): Measurement {
  const latencies = rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const n = latencies.length;
  const sum = (pick: (r: Round) => number) => rounds.reduce((total, r) => total + pick(r), 0);
  return {
    requests: n,
    rps: n / sum((r) => r.elapsedS),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuMsPerRequest: sum((r) => r.cpuMs) / n,
    sandboxCpuMsPerRequest: sum((r) => r.sandboxCpuMs) / n,
    peakRssMb: Math.max(...rounds.map((r) => r.peakRssMb)),
    callsPerRequest: sum((r) => r.calls) / n,
  };
}

/**
 * Measures the gateway and the plain client in ROUNDS alternating rounds
 * (gateway, plain, gateway, plain, ...), each warmed up before its first:
 * whatever else the machine does in the meantime falls on both alike, so the
 * ratio holds better than one long run of each would.
 */
async function measureAll(targets: Target[], workload: Workload, concurrency: number, sandbox: Server): Promise<Measurement[]> {
  const rounds: Round[][] = targets.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, target] of targets.entries()) rounds[i]?.push(await round(target, workload, concurrency, sandbox, r === 0));
  }
  return rounds.map(combine);
}

// --- report ----------------------------------------------------------------------

interface Row {
  workload: string;
  latencyMs: number;
  concurrency: number;
  minimumCalls: number;
  criticalPathMs: number;
  gateway: Measurement;
  plain: Measurement;
  /** The Yoga reference, on the workloads it knows. */
  yoga?: Measurement;
}

const fixed = (value: number, digits = 1): string => (Number.isFinite(value) ? value.toFixed(digits) : '-');

function table(rows: Row[]): string {
  const head = [
    'workload',
    'lat ms',
    'c',
    'req/s gw',
    'req/s plain',
    'gw/plain',
    'req/s yoga',
    'gw/yoga',
    'p50 gw',
    'p50 plain',
    'p99 gw',
    'p99 plain',
    'CPU ms/req gw',
    'CPU plain',
    'gw/plain',
    'CPU yoga',
    'RSS MB gw',
    'RSS plain',
    'calls/req',
    'min',
    'p50/crit gw',
    'p50/crit plain',
  ];
  const body = rows.map((r) => [
    r.workload,
    String(r.latencyMs),
    String(r.concurrency),
    fixed(r.gateway.rps),
    fixed(r.plain.rps),
    fixed(r.gateway.rps / r.plain.rps, 2),
    r.yoga ? fixed(r.yoga.rps) : '-',
    r.yoga ? fixed(r.gateway.rps / r.yoga.rps, 2) : '-',
    fixed(r.gateway.p50),
    fixed(r.plain.p50),
    fixed(r.gateway.p99),
    fixed(r.plain.p99),
    fixed(r.gateway.cpuMsPerRequest, 2),
    fixed(r.plain.cpuMsPerRequest, 2),
    fixed(r.gateway.cpuMsPerRequest / r.plain.cpuMsPerRequest, 2),
    r.yoga ? fixed(r.yoga.cpuMsPerRequest, 2) : '-',
    fixed(r.gateway.peakRssMb, 0),
    fixed(r.plain.peakRssMb, 0),
    fixed(r.gateway.callsPerRequest, 2),
    String(r.minimumCalls),
    r.criticalPathMs ? fixed(r.gateway.p50 / r.criticalPathMs, 2) : '-',
    r.criticalPathMs ? fixed(r.plain.p50 / r.criticalPathMs, 2) : '-',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`;
  return [line(head), `|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...body.map(line)].join('\n');
}

interface TargetCheck {
  target: string;
  value: string;
  met: boolean;
}

/** The issue's targets, each as a ratio measured in this run. */
function targets(rows: Row[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const calls = rows.filter((r) => r.latencyMs === 0);
  if (calls.length) {
    const worst = calls.map((r) => r.gateway.callsPerRequest / r.minimumCalls).reduce((a, b) => Math.max(a, b), 0);
    checks.push({ target: 'upstream calls = minimum on every workload', value: `worst ${fixed(worst, 3)}x the minimum`, met: worst <= 1 });
  }
  const main = rows.find((r) => r.workload === 'projects-jobs-100x20' && r.latencyMs === 0 && r.concurrency === 16);
  if (main) {
    const throughput = main.gateway.rps / main.plain.rps;
    checks.push({ target: '100x20 at 16 clients: throughput >= 0.8x plain', value: `${fixed(throughput, 2)}x`, met: throughput >= 0.8 });
  }
  const latency = rows.find((r) => r.workload === 'projects-jobs-100x20' && r.latencyMs === 20 && r.concurrency === 1);
  if (latency) {
    const ratio = latency.gateway.p50 / latency.criticalPathMs;
    checks.push({
      target: '100x20, 20 ms/call, 1 client: p50 <= 1.25x critical path',
      value: `${fixed(ratio, 2)}x (${fixed(latency.gateway.p50)} ms / ${latency.criticalPathMs} ms)`,
      met: ratio <= 1.25,
    });
  }
  const single = rows.find((r) => r.workload === 'projects-jobs-100x20' && r.latencyMs === 0 && r.concurrency === 1);
  if (single) {
    const cpu = single.gateway.cpuMsPerRequest / single.plain.cpuMsPerRequest;
    checks.push({ target: '100x20 at 1 client: gateway CPU/request < 2x plain', value: `${fixed(cpu, 2)}x`, met: cpu < 2 });
  }
  for (const row of rows.filter((r) => r.yoga)) {
    const ratio = row.gateway.rps / (row.yoga?.rps ?? Number.NaN);
    checks.push({
      target: `${row.workload}, ${row.latencyMs} ms/call, ${row.concurrency} clients: throughput >= 1x the Yoga reference`,
      value: `${fixed(ratio, 2)}x`,
      met: ratio >= 1,
    });
  }
  if (main) {
    const cpu = main.gateway.cpuMsPerRequest / main.plain.cpuMsPerRequest;
    checks.push({ target: '100x20 at 16 clients: gateway CPU/request <= 1.5x plain', value: `${fixed(cpu, 2)}x`, met: cpu <= 1.5 });
  }
  const peak = Math.max(...rows.map((r) => r.gateway.peakRssMb).filter(Number.isFinite));
  if (Number.isFinite(peak)) {
    const scaleFree = Math.max(
      ...rows
        .filter((r) => !r.workload.startsWith('scale-1000'))
        .map((r) => r.gateway.peakRssMb)
        .filter(Number.isFinite),
    );
    checks.push({
      target: 'gateway peak RSS < 250 MB',
      value: `${fixed(peak, 0)} MB on any run (${fixed(scaleFree, 0)} MB without scale-1000)`,
      met: peak < 250,
    });
  }
  return checks;
}

// --- main ------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!flags['no-build']) buildForBench(new URL('.', ROOT));
  let workloads = await loadWorkloads();
  if (flags.only) {
    const only = flags.only.split(',');
    workloads = workloads.filter((w) => only.includes(w.name));
  }
  await mkdir(RESULTS, { recursive: true });

  const loadBefore = loadavg()[0] ?? 0;
  const sandbox = await startSandbox();
  const setLatency = async (ms: number) => {
    await fetch(`${sandbox.ready.control}/latency?ms=${ms}`, { method: 'PUT' });
  };
  const phases = [{ latencyMs: 0, concurrencies: CONCURRENCIES }, ...(LATENCY_MS > 0 ? [{ latencyMs: LATENCY_MS, concurrencies: CONCURRENCIES }] : [])];
  const rows: Row[] = [];
  try {
    for (const workload of workloads) {
      // Fresh server processes per workload: a peak RSS then belongs to that workload alone.
      const gateway = await startGateway(sandbox.ready);
      const started: Server[] = [gateway];
      try {
        const plain = await startPlain(sandbox.ready);
        started.push(plain);
        const yoga = YOGA_OPERATIONS.has(workload.operationName ?? '') ? await startYoga(sandbox.ready) : null;
        if (yoga) started.push(yoga);
        const targetList: Target[] = [
          { name: 'gateway', server: gateway, url: new URL(gateway.ready.url ?? '') },
          { name: 'plain', server: plain, url: new URL(plain.ready.url ?? '') },
          ...(yoga ? [{ name: 'yoga' as const, server: yoga, url: new URL(yoga.ready.url ?? '') }] : []),
        ];
        // All answer with the same data, or the comparison means nothing.
        await setLatency(0);
        const answers = await Promise.all(targetList.map((t) => loadClient(t, workload, 1).send()));
        for (const [i, answer] of answers.entries()) {
          if (!isDeepStrictEqual(JSON.parse(answers[0] ?? ''), JSON.parse(answer))) {
            throw new Error(`${workload.name}: the gateway and ${targetList[i]?.name} answer differently`);
          }
        }
        for (const phase of phases) {
          await setLatency(phase.latencyMs);
          for (const concurrency of phase.concurrencies) {
            const [gw, pl, yo] = (await measureAll(targetList, workload, concurrency, sandbox)) as [Measurement, Measurement, Measurement?];
            rows.push({
              workload: workload.name,
              latencyMs: phase.latencyMs,
              concurrency,
              minimumCalls: workload.minimumCalls,
              criticalPathMs: workload.rounds * phase.latencyMs,
              gateway: gw,
              plain: pl,
              ...(yo ? { yoga: yo } : {}),
            });
            console.error(
              `${workload.name} latency ${phase.latencyMs} c${concurrency}: gateway ${fixed(gw.rps)} req/s, plain ${fixed(pl.rps)} req/s${yo ? `, yoga ${fixed(yo.rps)} req/s` : ''}`,
            );
          }
        }
      } finally {
        for (const server of started.reverse()) await server.stop();
      }
    }
  } finally {
    await sandbox.stop();
  }

  const checks = targets(rows);
  const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim();
  const report = [
    `Gateway vs plain REST client, ${ROUNDS} alternating rounds of ${SECONDS} s each after ${WARMUP} s warm-up, ${CONNECTIONS} upstream connections, ` +
      `throughput runs at 0 ms sandbox latency, latency runs at ${LATENCY_MS} ms, upstream answers ${flags.render ? 'rendered on every call' : 'memoized'}, ` +
      `NODE_OPTIONS "${flags['node-options']}", load average ${fixed(loadBefore, 2)} before and ${fixed(loadavg()[0] ?? 0, 2)} after ` +
      `(other work on the machine skews absolute numbers; both sides share it) (${new Date().toISOString()}).`,
    '',
    table(rows),
    '',
    ...checks.map((c) => `- ${c.met ? 'met    ' : 'NOT met'} ${c.target}: ${c.value}`),
  ].join('\n');
  console.log(report);
  const settings = {
    command,
    seconds: SECONDS,
    rounds: ROUNDS,
    warmup: WARMUP,
    connections: CONNECTIONS,
    latencyMs: LATENCY_MS,
    memoizedUpstream: !flags.render,
    nodeOptions: flags['node-options'],
    loadAverage: { before: loadBefore, after: loadavg()[0] ?? 0 },
  };
  await writeFile(new URL('latest.json', RESULTS), `${JSON.stringify({ ...settings, rows, targets: checks }, null, 2)}\n`);
  await writeFile(new URL('latest.md', RESULTS), `${report}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
