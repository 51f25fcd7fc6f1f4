/**
 * `npm run bench:dashboard`: what the answer cache saves the upstream. N
 * users (distinct tokens, the same 100 projects) each refresh the 100x20 CI
 * dashboard every 2 s for 60 s, while one project's jobs change every 5 s
 * (a job retried in the sandbox GitLab). Three runs, each on a fresh sandbox
 * and gateway:
 *
 *   cache off         CACHE_MAX_AGE_MS=0
 *   cache             the defaults (5 s), no webhooks
 *   cache + webhooks  the defaults, and the gateway's receiver registered on
 *                     the 100 projects, so each change's webhook reaches it
 *                     (one event of each first: a project counts as
 *                     webhook-fed once its events arrive)
 *
 * A fourth run is the third with one user; a fifth the third with no changes,
 * so that every later refresh is warm (nothing it read changed); a sixth
 * and seventh the floors under it: the same users and client against
 * bench/floor-server.ts, which writes the gateway's answer to every POST and
 * nothing else, bare or through Yoga.
 * "Later refreshes" leave out each user's first dashboard, built cold
 * whatever the cache. Printed per run: upstream GETs per refresh, stale answers (a refresh that
 * misses a change whose webhook was delivered before it began, or that was
 * made longer than the allowed age before it began: 0 when cache is off, 5 s
 * without webhooks, 60 s with them), p50 and p99 of a refresh (to its answer's last byte: the client's parse after), and the
 * gateway's peak RSS. Targets: 20x fewer calls than off with webhooks, 2x
 * without, and no stale answer; and the gateway's own CPU per refresh
 * (user + system time of its process over the run, from /proc), which a
 * warm answer should keep at a small fraction of a cold one's.
 *
 *   npm run bench:dashboard -- [--users 20] [--seconds 60] [--refresh 2000] [--change 5000] [--latency 0] [--only <mode>] [--no-build] [--profile]
 *   (--profile: then npx tsx bench/profile-summary.ts dashboard)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startGitlabSandbox, type GitlabSandbox } from '../src/sandbox/gitlab/server.js';
import { waitForOutput } from '../test/helpers/processes.js';
import { buildForBench, cpuMs } from './proc.js';
import { BENCH_GITLAB_OPTIONS } from './sandbox-options.js';

const ROOT = new URL('../', import.meta.url);
const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '60' },
    refresh: { type: 'string', default: '2000' },
    change: { type: 'string', default: '5000' },
    latency: { type: 'string', default: '0' },
    only: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    /** Each gateway under node --cpu-prof, into bench/results/profiles/dashboard/ (bench/profile-summary.ts reads it). */
    profile: { type: 'boolean', default: false },
  },
});
const USERS = Number(values.users);
const SECONDS = Number(values.seconds);
const REFRESH_MS = Number(values.refresh);
const CHANGE_MS = Number(values.change);
const SECRET = 'bench-dashboard-webhook-secret-0123';
/** bulk-project-1: the first project of the dashboard, the one whose jobs change. */
const CHANGING = 4_000_001_001;
const QUERY = readFileSync(new URL('bench/workloads/projects-jobs-100x20.graphql', ROOT), 'utf8');

interface Mode {
  name: string;
  env: Record<string, string>;
  webhooks: boolean;
  /** How old an answer may be, in ms, for a change announced by no webhook. */
  allowedAgeMs: number;
  /** Users refreshing, when not --users. */
  users?: number;
  /** False: no job changes during the run, so every later refresh is a warm one (nothing it read changed). */
  changes?: boolean;
  /** A floor: a bare Node server (or a bare Yoga one) in place of the gateway, writing the dashboard's answer (as the gateway gave it) to every POST. */
  floor?: 'node' | 'yoga';
}

const MODES: Mode[] = [
  { name: 'cache off', env: { CACHE_MAX_AGE_MS: '0' }, webhooks: false, allowedAgeMs: 0 },
  { name: 'cache', env: {}, webhooks: false, allowedAgeMs: 5_000 },
  { name: 'cache + webhooks', env: {}, webhooks: true, allowedAgeMs: 60_000 },
  { name: 'cache + webhooks, 1 user', env: {}, webhooks: true, allowedAgeMs: 60_000, users: 1 },
  { name: 'cache + webhooks, no changes', env: {}, webhooks: true, allowedAgeMs: 60_000, changes: false },
  { name: 'floor: bare Node server, no changes', env: {}, webhooks: false, allowedAgeMs: 60_000, changes: false, floor: 'node' },
  { name: 'floor: bare Yoga server, no changes', env: {}, webhooks: false, allowedAgeMs: 60_000, changes: false, floor: 'yoga' },
];

interface Change {
  madeAt: number;
  /** When the gateway answered its webhook (it drops first, then answers); null without webhooks. */
  deliveredAt: number | null;
  jobId: number;
}

interface Result {
  mode: string;
  refreshes: number;
  calls: number;
  stale: number;
  failed: number;
  p50: number;
  p99: number;
  peakRssMb: number;
  /** The gateway process's CPU time over the run, in ms. */
  cpuMs: number;
  /** The same from when every user had its first dashboard (each user's first is built cold, whatever the cache), and the refreshes after. */
  laterCpuMs: number;
  laterRefreshes: number;
  /** p50 of the refreshes after each user's first. */
  laterP50: number;
  /** Warm answers by outcome over the run (served as kept, renewed, shared, patched, kept after running), from the gateway's /metrics. */
  warm: WarmCounts;
}

async function gql(url: string, token: string, query: string): Promise<{ data?: unknown; errors?: unknown[] }> {
  return (await timedGql(url, token, query)).answer;
}

/**
 * A refresh, and how long it took to its answer's last byte: the server's
 * latency. The client's parse of the answer comes after the clock stops:
 * the same for any server, it was half the bare floor's p50 here (7 ms to
 * 3.5 ms without it).
 */
async function timedGql(url: string, token: string, query: string): Promise<{ answer: { data?: unknown; errors?: unknown[] }; ms: number }> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'private-token': token },
    body: JSON.stringify({ query }),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  return { answer: JSON.parse(text) as { data?: unknown; errors?: unknown[] }, ms };
}

async function rest<T>(sandbox: GitlabSandbox, method: string, path: string): Promise<T> {
  const response = await fetch(`${sandbox.url}/api/v4${path}`, { method, headers: { 'private-token': 'admin-token' } });
  return (await response.json()) as T;
}

/** The newest job of the changing project in a dashboard answer. */
function newestJob(data: unknown): number {
  const projects = (data as { projects?: { nodes?: { id: string; jobs?: { nodes?: { id: string }[] } }[] } }).projects?.nodes ?? [];
  const project = projects.find((p) => p.id === `gid://duograph/Project/${CHANGING}`);
  return Math.max(0, ...(project?.jobs?.nodes ?? []).map((job) => Number(job.id.split('/').pop())));
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
}

/** Clock ticks per second of /proc's CPU times. */

function peakRssMb(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

async function run(mode: Mode): Promise<Result> {
  const sandbox = await startGitlabSandbox({ ...BENCH_GITLAB_OPTIONS, extraTokens: USERS });
  sandbox.setLatency(Number(values.latency));
  // Not the floor's gateway: it only gives the answer the floor writes.
  const profile = values.profile && !mode.floor ? ['--cpu-prof', '--cpu-prof-dir=bench/results/profiles/dashboard'] : [];
  let child: ChildProcess = spawn(process.execPath, [...profile, 'dist/src/main.js', 'serve', '--port', '0', '--host', '127.0.0.1'], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', GITLAB_URL: sandbox.url, GITLAB_WEBHOOK_SECRET: SECRET, LOG_LEVEL: 'error', ...mode.env },
  });
  let url = (await waitForOutput(child, /GraphiQL at (\S+)/, 'gateway'))[1] ?? '';
  if (mode.floor) {
    // The gateway's answer, byte for byte, then the gateway gone: the same client loop against what only writes it.
    const dir = mkdtempSync(join(tmpdir(), 'duograph-floor-'));
    const file = join(dir, 'answer.json');
    const answer = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'private-token': 'user-1-token' },
      body: JSON.stringify({ query: QUERY }),
    });
    writeFileSync(file, Buffer.from(await answer.arrayBuffer()));
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    child = spawn(process.execPath, ['dist/bench/floor-server.js', '--body', file, ...(mode.floor === 'yoga' ? ['--yoga'] : [])], { cwd: ROOT });
    url = (await waitForOutput(child, /"url":"([^"]+)"/, 'floor server'))[1] ?? '';
    // Read at its start.
    rmSync(dir, { recursive: true, force: true });
  }
  if (mode.webhooks) {
    for (let i = 0; i < 100; i++) {
      const answer = await gql(url, 'admin-token', `mutation { jobStatusWebhookRegister(input: { projectId: "${CHANGING + i}" }) { errors { message } } }`);
      if (answer.errors) throw new Error(`registering the receiver failed: ${JSON.stringify(answer.errors)}`);
    }
    // A project counts as webhook-fed once one of its events arrived (registering is not enough): one job of each is retried.
    for (let i = 0; i < 100; i++) {
      const jobs = await rest<{ id: number; status: string }[]>(sandbox, 'GET', `/projects/${CHANGING + i}/jobs?per_page=100`);
      const finished = jobs.find((job) => ['success', 'failed', 'canceled'].includes(job.status));
      if (finished) await rest(sandbox, 'POST', `/projects/${CHANGING + i}/jobs/${finished.id}/retry`);
    }
    await sandbox.flushDeliveries();
  }
  sandbox.clearRequests();
  const warmBefore = await warmCounts(url);
  const cpuBefore = cpuMs(child.pid);
  const changes: Change[] = [];
  const durations: number[] = [];
  let stale = 0;
  let failed = 0;
  const until = Date.now() + SECONDS * 1000;

  const changer = (async () => {
    while (mode.changes !== false && Date.now() + CHANGE_MS < until) {
      await new Promise((resolve) => setTimeout(resolve, CHANGE_MS));
      const jobs = await rest<{ id: number; status: string }[]>(sandbox, 'GET', `/projects/${CHANGING}/jobs?per_page=100`);
      const finished = jobs.find((job) => ['success', 'failed', 'canceled'].includes(job.status));
      if (!finished) continue;
      const before = sandbox.deliveries.length;
      const retried = await rest<{ id: number }>(sandbox, 'POST', `/projects/${CHANGING}/jobs/${finished.id}/retry`);
      const change: Change = { madeAt: Date.now(), deliveredAt: null, jobId: retried.id };
      changes.push(change);
      if (sandbox.deliveries.length > before) {
        await sandbox.flushDeliveries();
        change.deliveredAt = Date.now();
      }
    }
  })();

  const users = mode.users ?? USERS;
  let firsts = 0;
  let later: { cpu: number; refreshes: number } | null = null;
  const laterDurations: number[] = [];
  const user = async (token: string) => {
    // Spread the first refreshes over the interval, as real users arrive.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * REFRESH_MS));
    for (let n = 0; Date.now() < until; n++) {
      // Wall time to schedule and to judge staleness against the changes' stamps; the monotonic clock for a failed refresh's latency, as timedGql's.
      const started = Date.now();
      const sent = performance.now();
      const counted = later !== null && n > 0;
      // A connection the gateway closed as idle just as it was reused (a loaded machine's timers run late) counts as failed.
      const { answer, ms } = await timedGql(url, token, QUERY).catch((error: unknown) => ({
        answer: { errors: [error] } as { data?: unknown; errors?: unknown[] },
        ms: performance.now() - sent,
      }));
      durations.push(ms);
      if (counted) laterDurations.push(ms);
      if (n === 0 && ++firsts === users) later = { cpu: cpuMs(child.pid), refreshes: durations.length };
      if (answer.errors || !answer.data) {
        failed++;
        if (failed === 1)
          console.error(
            `${mode.name}: a refresh failed: ${answer.errors ? String(answer.errors[0] instanceof Error ? answer.errors[0] : JSON.stringify(answer.errors[0])) : 'no data'}`,
          );
      } else {
        const seen = newestJob(answer.data);
        const missed = changes.some((c) => c.jobId > seen && ((c.deliveredAt !== null && c.deliveredAt <= started) || c.madeAt <= started - mode.allowedAgeMs));
        if (missed) stale++;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + REFRESH_MS - Date.now())));
    }
  };
  await Promise.all([changer, ...Array.from({ length: users }, (_, i) => user(`user-${i + 1}-token`))]);
  const calls = sandbox.requests.filter((r) => r.method === 'GET').length;
  const peak = peakRssMb(child.pid);
  const cpuEnd = cpuMs(child.pid);
  const cpu = cpuEnd - cpuBefore;
  const warm = await warmCounts(url);
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  await sandbox.close();
  durations.sort((a, b) => a - b);
  return {
    mode: mode.name,
    refreshes: durations.length,
    calls,
    stale,
    failed,
    p50: percentile(durations, 50),
    p99: percentile(durations, 99),
    peakRssMb: peak,
    cpuMs: cpu,
    laterCpuMs: later ? cpuEnd - (later as { cpu: number }).cpu : 0,
    laterRefreshes: later ? durations.length - (later as { refreshes: number }).refreshes : 0,
    laterP50: percentile(
      laterDurations.sort((a, b) => a - b),
      50,
    ),
    warm: Object.fromEntries(OUTCOMES.map((o) => [o, warm[o] - warmBefore[o]])) as WarmCounts,
  };
}

const OUTCOMES = ['served', 'renewed', 'shared', 'patched', 'kept'] as const;
const percent = (part: number, whole: number) => `${((100 * part) / Math.max(1, whole)).toFixed(0)}%`;
type WarmCounts = Record<(typeof OUTCOMES)[number], number>;

/** duograph_warm_answers_total by outcome, from the gateway's /metrics. */
async function warmCounts(graphqlUrl: string): Promise<WarmCounts> {
  const text = await (await fetch(new URL('/metrics', graphqlUrl))).text();
  const count = (outcome: string) => Number(new RegExp(`^duograph_warm_answers_total\\{outcome="${outcome}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return Object.fromEntries(OUTCOMES.map((o) => [o, count(o)])) as WarmCounts;
}

if (!values['no-build']) buildForBench(ROOT, true);
const results: Result[] = [];
// --only runs the modes whose names contain it (`--only webhooks`); the ratios then compare with the first of them.
for (const mode of MODES.filter((m) => values.only === undefined || m.name.includes(values.only))) results.push(await run(mode));
const off = results[0] as Result;
const perRefresh = (r: Result) => r.calls / Math.max(1, r.refreshes);
console.log(`${USERS} users refresh the 100x20 dashboard every ${REFRESH_MS} ms for ${SECONDS} s; one project's jobs change every ${CHANGE_MS} ms`);
console.log(
  '| run | refreshes | upstream GETs | per refresh | fewer than off | stale | failed | p50 ms | p99 ms | gateway CPU ms / refresh | later refreshes: p50 ms, CPU ms / refresh | answered warm: served / renewed / shared | patched | peak RSS MB |',
);
console.log('|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
for (const r of results) {
  const ratio = perRefresh(off) / Math.max(perRefresh(r), 1e-9);
  console.log(
    `| ${r.mode} | ${r.refreshes} | ${r.calls} | ${perRefresh(r).toFixed(2)} | ${r.calls === 0 ? '-' : `${ratio.toFixed(1)}x`} | ${r.stale} | ${r.failed} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(0)} | ${(r.cpuMs / Math.max(1, r.refreshes)).toFixed(2)} | ${r.laterP50.toFixed(1)}, ${(r.laterCpuMs / Math.max(1, r.laterRefreshes)).toFixed(2)} | ${percent(r.warm.served + r.warm.renewed + r.warm.shared, r.refreshes)}: ${percent(r.warm.served, r.refreshes)} / ${percent(r.warm.renewed, r.refreshes)} / ${percent(r.warm.shared, r.refreshes)} | ${percent(r.warm.patched, r.refreshes)} | ${r.peakRssMb.toFixed(0)} |`,
  );
}
const byName = (name: string) => results.find((r) => r.mode === name);
const cpuPerRefresh = (r: Result) => r.cpuMs / Math.max(1, r.refreshes);
const [cold, plain, hooked] = [byName('cache off'), byName('cache'), byName('cache + webhooks')];
if (cold && hooked) {
  console.log(
    `warm: a refresh with webhooks costs ${(cpuPerRefresh(cold) / Math.max(cpuPerRefresh(hooked), 1e-9)).toFixed(1)}x less gateway CPU than with the cache off`,
  );
}
if (cold && plain && hooked) {
  console.log(
    `targets: webhooks ${(perRefresh(cold) / perRefresh(hooked)).toFixed(1)}x (>= 20x), plain ${(perRefresh(cold) / perRefresh(plain)).toFixed(1)}x (>= 2x), stale ${results.reduce((n, r) => n + r.stale, 0)} (0)`,
  );
}
process.exit(0);
