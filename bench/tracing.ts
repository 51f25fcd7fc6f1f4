/**
 * `npm run bench:tracing`: what OpenTelemetry costs on the 100x20 workload
 * (one request, 101 upstream calls, so 103 spans when traced). The built
 * gateway runs against the bench sandbox (dist/bench/sandbox-process.js,
 * memoized answers) in each mode:
 *
 *   off          no OTLP endpoint: the SDK is not loaded
 *   off again    the same again: how far two runs of one build differ (the noise)
 *   always_off   OTLP endpoint set, OTEL_TRACES_SAMPLER=always_off: the hooks and spans that are never sampled
 *   on 0.1       OTLP/HTTP protobuf to a loopback receiver, OTEL_TRACES_SAMPLER=traceidratio 0.1
 *   on 1.0       the same, every request sampled
 *   baseline     with --baseline <git rev>: that revision built beside this one (its own
 *                worktree, this node_modules), for what the request id and the hooks cost when off
 *
 * Each round runs every mode once, each round starting one mode later, so
 * that neither drift on the machine nor the place in the order falls on one
 * mode more than another (with a fixed order, 0.1 always ran right after off
 * and measured 1.05x to 1.13x of it; rotated, 1.02x). Each run warms up for
 * `--warmup` seconds first: a 100x20 request takes about 60 ms of CPU, so one
 * second is 17 requests, too few for the JIT to have settled.
 *
 * Prints CPU ms per request of the gateway process (utime+stime from /proc),
 * requests/s, and spans received per request, each mode's CPU ratio to `off`
 * over all rounds, and the lowest and highest ratio of a single round
 * (targets: off no more than the baseline within noise; 0.1 under 5%).
 *
 *   npm run bench:tracing -- --seconds 5 --rounds 5 --concurrency 16 [--baseline 1ff4de8] [--modes "off,on 0.1"]
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { buildForBench, cpuMs } from './proc.js';

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '16' },
    baseline: { type: 'string' },
    /** Comma-separated mode names to run (all by default), e.g. "off,on 0.1": more rounds of the two that matter in the same time. */
    modes: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
  },
});
const SECONDS = Number(flags.seconds);
const WARMUP = Number(flags.warmup);
const ROUNDS = Number(flags.rounds);
const CONCURRENCY = Number(flags.concurrency);
const ROOT = new URL('../', import.meta.url).pathname;
const QUERY = readFileSync(join(ROOT, 'bench/workloads/projects-jobs-100x20.graphql'), 'utf8');

interface Mode {
  name: string;
  main: string;
  env: Record<string, string>;
}

interface Proc {
  pid: number;
  ready: string;
  stop(): Promise<void>;
}

function start(args: string[], env: Record<string, string>, ready: RegExp): Promise<Proc> {
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start within 30 s`)), 30_000);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const match = ready.exec(line);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        pid: child.pid ?? 0,
        ready: match[1] ?? line,
        async stop() {
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

/** A collector that counts the spans it receives and keeps nothing (protobuf: counts Span messages by their tag). */
async function startSink(): Promise<{ url: string; exports: () => number; bytes: () => number; close: () => void }> {
  let exports = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      exports++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exports: () => exports, bytes: () => bytes, close: () => server.close() };
}

/** A built copy of `rev` beside this checkout, using this node_modules; returns its main.js. */
function buildBaseline(rev: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'duograph-baseline-'));
  const run = (command: string, args: string[], cwd: string) => {
    const result = spawnSync(command, args, { cwd, stdio: 'inherit' });
    if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed`);
  };
  run('git', ['worktree', 'add', '--detach', dir, rev], ROOT);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], dir);
  return join(dir, 'dist/src/main.js');
}

/** Keeps CONCURRENCY requests in flight for `seconds`; returns how many were answered. */
async function drive(url: URL, seconds: number): Promise<number> {
  const pool = new Pool(url.origin, { connections: CONCURRENCY, pipelining: 1 });
  const body = JSON.stringify({ query: QUERY });
  const headers = { 'content-type': 'application/json', accept: 'application/json', 'private-token': 'demo-token' };
  let done = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        const response = await pool.request({ method: 'POST', path: url.pathname, headers, body });
        const text = await response.body.text();
        if (response.statusCode !== 200 || text.includes('"errors":[')) throw new Error(`${response.statusCode} ${text.slice(0, 200)}`);
        done++;
      }
    }),
  );
  await pool.close();
  return done;
}

async function main(): Promise<void> {
  if (!flags['no-build']) buildForBench(ROOT);
  const sandbox = await start(['dist/bench/sandbox-process.js'], {}, /^(\{.*\})$/);
  const upstreams = JSON.parse(sandbox.ready) as { gitlab: string; hubzilla: string };
  const sink = await startSink();
  const main = join(ROOT, 'dist/src/main.js');
  const traced = (ratio: string) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: ratio });
  const all: Mode[] = [
    ...(flags.baseline ? [{ name: `baseline ${flags.baseline}`, main: buildBaseline(flags.baseline), env: {} }] : []),
    { name: 'off', main, env: {} },
    { name: 'off again', main, env: {} },
    { name: 'always_off', main, env: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: 'always_off' } },
    { name: 'on 0.1', main, env: traced('0.1') },
    { name: 'on 1.0', main, env: traced('1.0') },
  ];
  const modes = all.filter((mode) => !flags.modes || flags.modes.split(',').includes(mode.name));
  const totals = new Map(modes.map((m) => [m.name, { cpu: 0, requests: 0, seconds: 0, bytes: 0, exported: 0, perRound: [] as number[] }]));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const shift = round % modes.length;
      for (const mode of [...modes.slice(shift), ...modes.slice(0, shift)]) {
        if (!existsSync(mode.main)) throw new Error(`${mode.main} is not built`);
        const gateway = await start(
          [mode.main, 'serve'],
          {
            GITLAB_URL: upstreams.gitlab,
            HUBZILLA_URL: upstreams.hubzilla,
            PORT: '0',
            HOST: '127.0.0.1',
            UPSTREAM_CONNECTIONS: '128',
            UPSTREAM_MAX_CONCURRENCY: '128',
            // Every request's calls go out: what tracing costs is measured on them, not on cache hits.
            CACHE_MAX_AGE_MS: '0',
            ...mode.env,
          },
          /GraphiQL at (\S+)/,
        );
        try {
          const url = new URL(gateway.ready);
          const bytes0 = sink.bytes();
          const warm = await drive(url, WARMUP);
          const cpu0 = cpuMs(gateway.pid);
          const t0 = performance.now();
          const requests = await drive(url, SECONDS);
          const total = totals.get(mode.name);
          if (total) {
            const cpu = cpuMs(gateway.pid) - cpu0;
            total.cpu += cpu;
            total.perRound[round] = cpu / requests;
            total.requests += requests;
            total.seconds += (performance.now() - t0) / 1000;
            // Every span of this gateway (warm-up included) reaches the sink by its exit: the exporter flushes on SIGTERM.
            await gateway.stop();
            total.bytes += sink.bytes() - bytes0;
            total.exported += warm + requests;
          }
        } finally {
          await gateway.stop();
        }
        console.error(`round ${round + 1} ${mode.name}: done`);
      }
    }
  } finally {
    await sandbox.stop();
    sink.close();
    for (const mode of all) {
      // A baseline's worktree goes with the run.
      if (mode.main !== main) spawnSync('git', ['worktree', 'remove', '--force', join(mode.main, '../../..')], { cwd: ROOT, stdio: 'inherit' });
    }
  }
  const off = totals.get('off');
  const offCpu = off ? off.cpu / off.requests : Number.NaN;
  const lines = [
    `100x20 (101 upstream calls per request), concurrency ${CONCURRENCY}, ${ROUNDS} alternating rounds of ${SECONDS} s after ${WARMUP} s warm-up, Node ${process.versions.node} (${new Date().toISOString()})`,
    '',
    '| mode | req/s | CPU ms/req | vs off | one round vs off | OTLP KB/req |',
    '|:--|--:|--:|--:|--:|--:|',
    ...[...totals].map(([name, t]) => {
      const perRequest = t.cpu / t.requests;
      const ratios = t.perRound.map((cpu, round) => cpu / (off?.perRound[round] ?? Number.NaN));
      const spread = `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
      return `| ${name} | ${(t.requests / t.seconds).toFixed(1)} | ${perRequest.toFixed(1)} | ${(perRequest / offCpu).toFixed(3)}x | ${spread} | ${(t.bytes / 1024 / t.exported).toFixed(2)} |`;
    }),
  ];
  console.log(lines.join('\n'));
}

await main();
