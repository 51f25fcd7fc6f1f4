/**
 * Three gateways on one real redis-server, through the faults an operator
 * meets: Redis paused (SIGSTOP: sockets open, no answers) and Redis killed
 * and started again. Every webhook gets an answer within GitLab's 10 s
 * (503 when it cannot be recorded, so GitLab delivers it again); while Redis
 * does not answer, /readyz says degraded and no answer keeps the webhook
 * age; a drop made while Redis was away reaches every instance once it
 * answers again. Decided from events (/readyz, answers), on a clock the
 * test moves for the answer cache. Skipped without redis-server, except
 * under CI.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startGitlabSandbox, type GitlabSandbox } from '../../src/sandbox/gitlab/server.js';
import { type App, buildApp } from '../../src/server/app.js';
import { startRedis } from '../helpers/processes.js';

const SECRET = 'redis-faults-webhook-secret-0123456789';
const hasRedis = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;
if (!hasRedis && process.env.CI) throw new Error('redis-server is not on PATH, and CI requires the Redis fault test (apt-get install -y redis-server).');
if (!hasRedis) console.warn('Skipping the Redis fault test: redis-server is not on PATH (apt-get install -y redis-server).');

const JOBS = '{ project(id: "7") { jobs(first: 3) { nodes { restId status } } } }';
const fixture = JSON.parse(readFileSync(new URL('../fixtures/gitlab-webhooks/job_event.payload.json', import.meta.url), 'utf8')) as Record<string, unknown>;
let delivery = 0;

describe.skipIf(!hasRedis)('a fleet on one Redis through its faults', () => {
  let redis: Awaited<ReturnType<typeof startRedis>>;
  let sandbox: GitlabSandbox;
  const gateways: { app: App; url: URL }[] = [];
  let clock = Date.now();
  const jobGets = () => sandbox.requests.filter((r) => r.method === 'GET' && r.path === '/api/v4/projects/7/jobs').length;

  /** A job event of project 7, as GitLab posts it (a new state each time, so no two are one delivery); its answer or a failure after GitLab's 10 s. */
  async function webhook(to: URL): Promise<number> {
    delivery++;
    const body = JSON.stringify({
      ...fixture,
      project_id: 7,
      build_id: 2003,
      build_status: delivery % 2 ? 'running' : 'pending',
      build_name: `fault-${delivery}`,
    });
    const response = await fetch(new URL('/webhooks/gitlab', to), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gitlab-token': SECRET, 'x-gitlab-event': 'Job Hook' },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    await response.text();
    return response.status;
  }

  async function gql(url: URL): Promise<unknown> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'private-token': 'demo-token' },
      body: JSON.stringify({ query: JOBS }),
    });
    return ((await response.json()) as { data?: unknown }).data;
  }

  /** Waits until each of `urls` has read project 7's jobs from GitLab once again: a drop reached it (until then it answers from its cache). */
  async function readAgain(urls: URL[]): Promise<void> {
    const held = jobGets();
    await vi.waitFor(
      async () => {
        for (const url of urls) await gql(url);
        expect(jobGets()).toBe(held + urls.length);
      },
      { timeout: 60_000, interval: 50 },
    );
  }

  /** Waits until every gateway's /readyz says Redis answers (or does not). */
  async function redisAnswering(answering: boolean): Promise<void> {
    await vi.waitFor(
      async () => {
        for (const { url } of gateways) {
          const body = (await (await fetch(new URL('/readyz', url))).json()) as { status: string; redis?: { answering: boolean } };
          expect(body.redis?.answering).toBe(answering);
          expect(body.status).toBe(answering ? 'ready' : 'degraded');
        }
      },
      { timeout: 60_000, interval: 50 },
    );
  }

  beforeAll(async () => {
    redis = await startRedis();
    sandbox = await startGitlabSandbox({ clock: 'manual', rateLimitPerMinute: 1000 });
    for (let i = 0; i < 3; i++) {
      const config = loadConfig(
        {
          LOG_FILE: process.env.LOG_FILE,
          LOG_LEVEL: process.env.LOG_LEVEL,
          REDIS_URL: redis.url,
          CACHE_STORE: 'memory',
          GITLAB_WEBHOOK_SECRET: SECRET,
          // The fleet's budget is GitLab's limit: no 429 from it, whatever Redis does.
          GITLAB_RATE_LIMIT_PER_MINUTE: '1000',
          CACHE_MAX_AGE_MS: '5000',
          CACHE_WEBHOOK_MAX_AGE_MS: '600000',
          POLL_INTERVAL_MS: '600000',
          POLL_MAX_INTERVAL_MS: '600000',
        },
        [],
      );
      const app = buildApp({ config, gitlabUrl: new URL(sandbox.url), now: () => clock });
      gateways.push({ app, url: await app.listen(0, '127.0.0.1') });
    }
  }, 60_000);
  afterAll(async () => {
    if (redis?.child.exitCode === null) redis.child.kill('SIGCONT');
    await Promise.all(gateways.map(({ app }) => app.close()));
    await sandbox?.close();
    redis?.child.kill('SIGTERM');
  });

  it('answers every webhook in time, says degraded, and loses no drop while Redis is paused', async () => {
    const [a, b, c] = gateways as [(typeof gateways)[0], (typeof gateways)[0], (typeof gateways)[0]];
    // Project 7 is webhook-fed: one of its events arrived. Each instance holds its jobs.
    expect(await webhook(a.url)).toBe(200);
    for (const { url } of gateways) await gql(url);
    const before = jobGets();
    for (const { url } of gateways) await gql(url);
    expect(jobGets()).toBe(before);

    redis.child.kill('SIGSTOP');
    const pausedAt = Date.now();
    // A's receiver cannot record the event: it says so in time, and GitLab will deliver it again. A drops its own answer at once.
    expect(await webhook(a.url)).toBe(503);
    await redisAnswering(false);
    // While nothing can be heard, B's answer has no webhook age: past the plain age it is read again.
    clock += 30_000;
    await gql(b.url);
    expect(jobGets()).toBe(before + 1);
    // Queries go on on every instance for the whole pause (15 s), answered: the budget counts in each process meanwhile.
    let rounds = 0;
    while (Date.now() - pausedAt < 15_000 || rounds < 3) {
      for (const { url } of gateways) expect(await gql(url)).toEqual({ project: { jobs: { nodes: expect.any(Array) } } });
      expect(await webhook(gateways[rounds % 3]?.url as URL)).toBe(503);
      rounds++;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }

    redis.child.kill('SIGCONT');
    await redisAnswering(true);
    // The drop A could not send went out once Redis answered: C, which held its answer all along, reads again (once the
    // drop has reached it: until then C answers from its cache, and the wait goes on).
    await readAgain([c.url]);
    // And the delivery GitLab makes again is recorded now.
    expect(await webhook(a.url)).toBe(200);
  }, 120_000);

  it('rides out Redis killed and started again: webhooks answered in time, drops made meanwhile reach every instance', async () => {
    const [a, b, c] = gateways as [(typeof gateways)[0], (typeof gateways)[0], (typeof gateways)[0]];
    for (const { url } of gateways) await gql(url);
    const port = redis.port;
    const exited = new Promise((resolve) => redis.child.once('exit', resolve));
    redis.child.kill('SIGKILL');
    await exited;
    expect(await webhook(b.url)).toBe(503);
    await redisAnswering(false);
    redis = await startRedis(port);
    await redisAnswering(true);
    await readAgain([a.url, c.url]);
    expect(await webhook(b.url)).toBe(200);
  }, 120_000);

  it('drew no 429 from GitLab through it all', async () => {
    for (const { app } of gateways) {
      const metric = await app.metrics.registry.getSingleMetric('duograph_upstream_requests_total')?.get();
      expect((metric?.values ?? []).filter((v) => v.labels.status === '429')).toEqual([]);
    }
  });
});
