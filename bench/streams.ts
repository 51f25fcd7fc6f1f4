/**
 * `npm run bench:streams`: one large job artifact (default 1 GiB) downloaded
 * straight from the sandbox GitLab, through the gateway's /downloads/gitlab
 * route, through a plain proxy (undici Pool + stream pipeline, nothing
 * else: what one Node hop costs the usual way), and through a bare relay
 * (raw TCP, no HTTP at all, upstream bytes read into reused buffers and
 * written on: the floor of any user-space hop on this machine), in one run.
 * Each server is its own process (the sandbox, the plain proxy and the bare
 * relay are this file with --sandbox / --plain / --floor,
 * the gateway is the built `node dist/src/main.js serve`); this process is
 * the client: it counts the bytes, checks them against Content-Length and a
 * sampled hash, and drops them. One warm-up download each (the sandbox then
 * computes the archive's CRC, once), then --runs rounds alternating the three;
 * medians reported. A proxy's RSS is VmRSS sampled every 20 ms plus VmHWM
 * (reset through clear_refs) from /proc; growth is its peak over every
 * download, warm-up included, minus its idle RSS before the first.
 *
 *   npm run bench:streams -- --bytes 1073741824 --runs 3 [--file] [--no-build]
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool, request } from 'undici';
import { LARGE_ARTIFACT_JOB_ID, LARGE_ARTIFACT_PATH } from '../src/sandbox/gitlab/ci-seed.js';
import { generatedZipSize } from '../src/sandbox/gitlab/zip-archive.js';
import { cpuMs } from './proc.js';

const { values: flags } = parseArgs({
  options: {
    bytes: { type: 'string', default: String(1024 ** 3) },
    runs: { type: 'string', default: '3' },
    // The raw single-file route (artifacts/:path) instead of the archive.
    file: { type: 'boolean', default: false },
    sandbox: { type: 'boolean', default: false },
    plain: { type: 'string' },
    floor: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
  },
});
const BYTES = Number(flags.bytes);
const RUNS = Number(flags.runs);
const ROOT = new URL('../', import.meta.url);
const MB = 1024 * 1024;
const PATH = `/projects/1/jobs/${LARGE_ARTIFACT_JOB_ID}/artifacts${flags.file ? `/${LARGE_ARTIFACT_PATH}` : ''}`;
const EXPECTED = flags.file ? BYTES : generatedZipSize(LARGE_ARTIFACT_PATH, BYTES);
const TOKEN = { 'private-token': 'demo-token' };
const TARGETS = ['direct', 'gateway', 'floor', 'plain'] as const;
type Target = (typeof TARGETS)[number];

/** Child: the sandbox GitLab, generating the archive chunk by chunk on each download. */
async function sandbox(): Promise<void> {
  const { startGitlabSandbox } = await import('../src/sandbox/gitlab/server.js');
  const gitlab = await startGitlabSandbox({ clock: 'manual', largeArtifactBytes: BYTES });
  console.log(`ready at ${gitlab.url}`);
  process.once('SIGTERM', () => void gitlab.close().then(() => process.exit(0)));
}

/** Child: the plain proxy, /downloads/gitlab/<path> to <origin>/api/v4/<path>, as the gateway's route does minus routing and credentials. */
function plain(origin: string): void {
  const pool = new Pool(origin, { connections: 4 });
  const server = createServer((req, res) => {
    const path = `/api/v4${(req.url ?? '').slice('/downloads/gitlab'.length)}`;
    void pool
      .request({ method: 'GET', path, headers: TOKEN })
      .then(async (up) => {
        res.writeHead(up.statusCode, { 'content-type': String(up.headers['content-type']), 'content-length': String(up.headers['content-length']) });
        await pipeline(up.body, res);
      })
      .catch(() => res.destroy());
  });
  server.listen(0, '127.0.0.1', () => console.log(`ready at http://127.0.0.1:${(server.address() as AddressInfo).port}/`));
}

/**
 * Child: the bare relay. Each connection gets its own upstream connection;
 * the caller's bytes go up as they are, the answer's come back through two
 * 1 MiB buffers that take turns (what the gateway's relay does, minus
 * reading HTTP), so its cost is the kernel's: two copies and a loopback send.
 */
function floor(origin: string): void {
  const { hostname, port } = new URL(origin);
  const server = createNetServer((client) => {
    const free: Buffer[] = [];
    const busy = new Set<Buffer>();
    let paused = false;
    const upstream = connect({
      host: hostname,
      port: Number(port),
      onread: {
        buffer: () => free.pop() ?? Buffer.allocUnsafe(1024 * 1024),
        callback: (bytes, buffer) => {
          const owner = buffer as Buffer;
          busy.add(owner);
          client.write(owner.subarray(0, bytes), () => {
            busy.delete(owner);
            free.push(owner);
            if (paused && busy.size < 2) {
              paused = false;
              upstream.resume();
            }
          });
          paused = busy.size >= 2;
          return !paused;
        },
      },
    });
    client.pipe(upstream);
    upstream.on('end', () => client.end());
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
  });
  server.listen(0, '127.0.0.1', () => console.log(`ready at http://127.0.0.1:${(server.address() as AddressInfo).port}/`));
}

/** Spawns node with `args`, resolving once a stdout line matches `ready`; stdout keeps being drained so the child never blocks on it. */
function start(name: string, args: string[], env: Record<string, string>, ready: RegExp): Promise<{ pid: number; url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, args, {
    cwd: fileURLToPath(ROOT),
    env: { ...process.env, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 30 s`)), 30_000);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before it was ready`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const url = ready.exec(line)?.[1];
      if (url === undefined) return;
      clearTimeout(timer);
      resolve({
        pid: child.pid ?? 0,
        url,
        stop: () => {
          child.kill('SIGTERM');
          return exited;
        },
      });
    });
  });
}

async function rssMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) / 1024;
}

async function cpuSeconds(pid: number): Promise<number> {
  return cpuMs(pid) / 1000;
}

/** Resets VmHWM to the current RSS; false where the kernel does not allow it (then only the 20 ms samples count). */
const resetPeak = (pid: number): Promise<boolean> =>
  writeFile(`/proc/${pid}/clear_refs`, '5').then(
    () => true,
    () => false,
  );

interface Run {
  target: Target;
  warmup: boolean;
  mbPerS: number;
  /** CPU seconds per GiB of the process serving the client: the sandbox for direct, else the proxy. */
  serverCpuSPerGiB: number;
  /** The proxy's peak RSS during this download; null for direct. */
  peakRssMb: number | null;
  /** sha256 of the first MiB and the last 4 KiB: every download must agree. */
  sample: string;
}

/** Downloads `url` once, counting and dropping the body, while sampling the RSS of `proxy` (if any). */
async function download(target: Target, warmup: boolean, url: string, server: number, proxy: number | null): Promise<Run> {
  const hwm = proxy !== null && (await resetPeak(proxy));
  let peak = proxy === null ? 0 : await rssMb(proxy);
  const sampler =
    proxy === null
      ? null
      : setInterval(
          () =>
            void rssMb(proxy).then(
              (mb) => (peak = Math.max(peak, mb)),
              () => {},
            ),
          20,
        );
  const cpu0 = await cpuSeconds(server);
  const started = performance.now();
  const response = await request(url, { headers: TOKEN });
  let bytes = 0;
  const head: Buffer[] = [];
  let tail: Buffer = Buffer.alloc(0);
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    if (bytes < MB) head.push(chunk.subarray(0, MB - bytes));
    bytes += chunk.length;
    tail = chunk.length >= 4096 ? chunk.subarray(-4096) : Buffer.concat([tail, chunk]).subarray(-4096);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = (await cpuSeconds(server)) - cpu0;
  if (sampler) clearInterval(sampler);
  if (proxy !== null) peak = Math.max(peak, await rssMb(proxy), hwm ? await rssMb(proxy, 'VmHWM') : 0);
  const length = Number(response.headers['content-length']);
  if (response.statusCode !== 200 || bytes !== length || bytes !== EXPECTED) {
    throw new Error(`${target}: status ${response.statusCode}, ${bytes} bytes, Content-Length ${length}, expected ${EXPECTED}`);
  }
  const sample = createHash('sha256').update(Buffer.concat(head)).update(tail).digest('hex');
  return { target, warmup, mbPerS: bytes / MB / seconds, serverCpuSPerGiB: (cpu * 1024 ** 3) / bytes, peakRssMb: proxy === null ? null : peak, sample };
}

/** The median; the upper one of an even count. */
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const fixed = (value: number, digits = 1): string => (Number.isFinite(value) ? value.toFixed(digits) : '-');

async function bench(): Promise<void> {
  // The gateway as `npm run build` makes it.
  if (!flags['no-build'] && spawnSync('npm', ['run', 'build'], { cwd: fileURLToPath(ROOT), stdio: 'inherit' }).status !== 0)
    throw new Error('npm run build failed');
  const loadBefore = loadavg()[0] ?? 0;
  const self = ['--import', 'tsx', fileURLToPath(import.meta.url), '--bytes', String(BYTES)];
  const upstream = await start('sandbox', [...self, '--sandbox'], {}, /^ready at (\S+)/);
  // No Hubzilla: an unused address, as nothing on this path reaches it.
  const env = { GITLAB_URL: upstream.url, HUBZILLA_URL: 'http://127.0.0.1:9', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  const started = await Promise.allSettled([
    start('gateway', ['dist/src/main.js', 'serve'], env, /GraphiQL at (\S+)/),
    start('floor', [...self, '--floor', upstream.url], {}, /^ready at (\S+)/),
    start('plain', [...self, '--plain', upstream.url], {}, /^ready at (\S+)/),
  ]);
  const proxies = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await Promise.all([...proxies.map((p) => p.stop()), upstream.stop()]);
    throw failed.reason;
  }
  const runs: Run[] = [];
  const idle: Partial<Record<Target, number>> = {};
  try {
    const [gateway, bare, plainProxy] = proxies as [(typeof proxies)[number], (typeof proxies)[number], (typeof proxies)[number]];
    // Per target: the URL, the process serving it (for CPU), and the proxy whose RSS is watched.
    const servers: Record<Target, [string, number, number | null]> = {
      direct: [`${upstream.url}/api/v4${PATH}`, upstream.pid, null],
      gateway: [new URL(`/downloads/gitlab${PATH}`, gateway.url).href, gateway.pid, gateway.pid],
      floor: [new URL(`/api/v4${PATH}`, bare.url).href, bare.pid, bare.pid],
      plain: [new URL(`/downloads/gitlab${PATH}`, plainProxy.url).href, plainProxy.pid, plainProxy.pid],
    };
    // A small download first, so the route's code is loaded before the idle RSS is read.
    await (await request(new URL('/downloads/gitlab/projects/1/jobs/1002/trace', gateway.url).href, { headers: TOKEN })).body.text();
    for (const [target, [, , proxy]] of Object.entries(servers)) if (proxy !== null) idle[target as Target] = await rssMb(proxy);
    for (let round = 0; round <= RUNS; round++) {
      for (const target of TARGETS) runs.push(await download(target, round === 0, ...servers[target]));
      console.error(
        `${round === 0 ? 'warm-up' : `run ${round}/${RUNS}`}: ${runs
          .slice(-TARGETS.length)
          .map((r) => `${r.target} ${fixed(r.mbPerS)} MB/s`)
          .join(', ')}`,
      );
    }
    if (new Set(runs.map((r) => r.sample)).size !== 1) throw new Error('the downloads differ in their sampled bytes');
  } finally {
    await Promise.all([...proxies.map((p) => p.stop()), upstream.stop()]);
  }

  const summarize = (target: Target) => {
    const mine = runs.filter((r) => r.target === target);
    const measured = mine.filter((r) => !r.warmup);
    // Every download counts for the peak, warm-up included: memory kept after one download is growth too.
    const peak = Math.max(...mine.map((r) => r.peakRssMb ?? Number.NaN));
    const rss = { idle: idle[target] ?? Number.NaN, peak, growth: peak - (idle[target] ?? Number.NaN) };
    return {
      mbPerS: median(measured.map((r) => r.mbPerS)),
      runsMbPerS: measured.map((r) => r.mbPerS),
      serverCpuSPerGiB: median(measured.map((r) => r.serverCpuSPerGiB)),
      rssMb: rss,
    };
  };
  const summary = { direct: summarize('direct'), gateway: summarize('gateway'), floor: summarize('floor'), plain: summarize('plain') };
  const ratio = summary.gateway.mbPerS / summary.direct.mbPerS;
  const { idle: idleMb, peak: peakMb, growth } = summary.gateway.rssMb;
  const checks = [
    { target: 'gateway RSS growth < 64 MB while streaming', value: `${fixed(growth)} MB (${fixed(idleMb)} -> ${fixed(peakMb)} MB)`, met: growth < 64 },
    {
      target: 'gateway throughput >= 0.8x direct download',
      value: `${fixed(ratio, 2)}x (bare relay ${fixed(summary.floor.mbPerS / summary.direct.mbPerS, 2)}x, plain proxy ${fixed(summary.plain.mbPerS / summary.direct.mbPerS, 2)}x)`,
      met: ratio >= 0.8,
    },
  ];
  const cells = [
    ['download', 'MB/s', 'MB/s runs', 'x direct', 'server CPU s/GiB', 'RSS MB idle', 'RSS MB peak', 'growth MB'],
    ...TARGETS.map((t) => {
      const { mbPerS, runsMbPerS, serverCpuSPerGiB, rssMb } = summary[t];
      return [
        t,
        fixed(mbPerS),
        runsMbPerS.map((v) => fixed(v)).join(', '),
        fixed(mbPerS / summary.direct.mbPerS, 2),
        fixed(serverCpuSPerGiB, 2),
        fixed(rssMb.idle),
        fixed(rssMb.peak),
        fixed(rssMb.growth),
      ];
    }),
  ];
  const widths = (cells[0] ?? []).map((_, i) => Math.max(...cells.map((r) => r[i]?.length ?? 0)));
  const line = (r: string[]) => `| ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`;
  const report = [
    `Streams: job ${LARGE_ARTIFACT_JOB_ID} ${flags.file ? `file ${LARGE_ARTIFACT_PATH}` : 'archive'}, ${EXPECTED} bytes, median of ${RUNS} rounds after one warm-up; server CPU is the ` +
      `sandbox's for direct, the proxy's otherwise; load average ${fixed(loadBefore, 2)} before, ${fixed(loadavg()[0] ?? 0, 2)} after (${new Date().toISOString()}).`,
    '',
    line(cells[0] ?? []),
    `|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`,
    ...cells.slice(1).map(line),
    '',
    ...checks.map((c) => `- ${c.met ? 'met    ' : 'NOT met'} ${c.target}: ${c.value}`),
  ].join('\n');
  console.log(report);
  const command = ['npm run bench:streams', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ');
  const results = {
    command,
    path: PATH,
    bytes: EXPECTED,
    runs: RUNS,
    loadAverage: { before: loadBefore, after: loadavg()[0] ?? 0 },
    summary,
    downloads: runs,
    targets: checks,
  };
  await mkdir(new URL('bench/results/', ROOT), { recursive: true });
  await writeFile(new URL('bench/results/streams.json', ROOT), `${JSON.stringify(results, null, 2)}\n`);
}

if (flags.sandbox) await sandbox();
else if (flags.plain) plain(flags.plain);
else if (flags.floor) floor(flags.floor);
else
  await bench().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
