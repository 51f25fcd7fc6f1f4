/**
 * One poll per project and credentials across a fleet: three gateway
 * processes share a real redis-server, each with a subscriber watching the
 * same pipeline with the same token, and no webhook. Exactly one instance
 * polls GitLab (it holds the lease) and its results reach the subscribers
 * of all three; when it is killed, another takes the lease within one lease
 * period and the survivors' subscribers go on without a lost or repeated
 * event. Skipped when redis-server is not installed, except under CI.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { startRedis, waitForOutput } from '../helpers/processes.js';
import { type GitlabSandbox, STEP_MS, startGitlabSandbox } from '../../src/sandbox/gitlab/server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const hasRedis = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;
if (!hasRedis && process.env.CI) throw new Error('redis-server is not on PATH, and CI requires the Redis lease test (apt-get install -y redis-server).');
if (!hasRedis) console.warn('Skipping the Redis lease test: redis-server is not on PATH (apt-get install -y redis-server).');

interface Gateway {
  child: ChildProcess;
  url: string;
  client: Client;
  events: string[];
}

async function startGateway(gitlabUrl: string, redisUrl: string): Promise<Gateway> {
  const child = spawn(process.execPath, ['dist/src/main.js', 'serve', '--port', '0', '--host', '127.0.0.1'], {
    cwd: root,
    // A 200 ms poll that never backs off: polls are easy to count. The lease then lasts its minimum, 2 s.
    env: { ...process.env, GITLAB_URL: gitlabUrl, REDIS_URL: redisUrl, POLL_INTERVAL_MS: '200', POLL_MAX_INTERVAL_MS: '200', LOG_LEVEL: 'warn', LOG_FILE: '' },
  });
  const match = await waitForOutput(child, /GraphiQL at (\S+)/, 'gateway');
  const url = match[1] ?? '';
  const client = createClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { 'Private-Token': 'demo-token' },
    retryAttempts: 0,
  });
  return { child, url, client, events: [] };
}

/** GitLab calls this gateway made to list a project's newest jobs: its polls. */
async function jobListCalls(gateway: Gateway): Promise<number> {
  const text = await (await fetch(new URL('/metrics', gateway.url))).text();
  let total = 0;
  for (const match of text.matchAll(/^duograph_upstream_requests_total\{[^}]*route="\/projects\/:param\/jobs"[^}]*\} (\d+)/gm)) total += Number(match[1]);
  return total;
}

describe.skipIf(!hasRedis)('one poll per project and credentials across three instances', () => {
  let redis: ChildProcess | undefined;
  let sandbox: GitlabSandbox;
  const gateways: Gateway[] = [];

  beforeAll(async () => {
    const started = await startRedis();
    redis = started.child;
    sandbox = await startGitlabSandbox({ clock: 'manual' });
    gateways.push(...(await Promise.all([1, 2, 3].map(() => startGateway(sandbox.url, started.url)))));
  }, 60_000);

  afterAll(async () => {
    for (const g of gateways) {
      await g.client.dispose();
      if (g.child.exitCode === null && g.child.signalCode === null) g.child.kill('SIGKILL');
    }
    await sandbox?.close();
    redis?.kill('SIGKILL');
  });

  it('polls from exactly one instance, and another takes over when it dies, with no event lost or repeated', async () => {
    for (const g of gateways) {
      g.client.subscribe(
        { query: 'subscription { jobStatusUpdated(projectId: "7", pipelineId: "202") { restId status } }' },
        {
          next: (r) => {
            const job = (r.data as { jobStatusUpdated: { restId: number; status: string } } | null)?.jobStatusUpdated;
            if (job) g.events.push(`${job.restId}:${job.status}`);
          },
          error: () => {},
          complete: () => {},
        },
      );
    }
    const initial = ['2003:RUNNING', '2004:CREATED', '2005:CREATED'];
    await vi.waitFor(() => expect(gateways.map((g) => g.events)).toEqual([initial, initial, initial]));

    // Over a second and a half, only the lease holder calls GitLab.
    const before = await Promise.all(gateways.map(jobListCalls));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const grew = (await Promise.all(gateways.map(jobListCalls))).map((n, i) => n - (before[i] ?? 0));
    expect(grew.filter((n) => n > 0)).toHaveLength(1);
    expect(Math.max(...grew)).toBeGreaterThanOrEqual(4);
    const holder = grew.findIndex((n) => n > 0);

    // Its poll reaches every subscriber, once.
    sandbox.advance(STEP_MS);
    const failed = [...initial, '2003:FAILED', '2004:SKIPPED', '2005:SKIPPED'];
    await vi.waitFor(() => expect(gateways.map((g) => [...g.events].sort())).toEqual(gateways.map(() => [...failed].sort())));

    // The holder dies; within a lease period (2 s) another polls, and the survivors see the retry's job move.
    gateways[holder]?.child.kill('SIGKILL');
    const survivors = gateways.filter((_, i) => i !== holder);
    const retried = await fetch(survivors[0]?.url ?? '', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'private-token': 'demo-token' },
      body: JSON.stringify({ query: 'mutation { jobRetry(input: { id: "gid://duograph/Job/7/2003" }) { job { restId } } }' }),
    });
    const newJob = ((await retried.json()) as { data: { jobRetry: { job: { restId: number } } } }).data.jobRetry.job.restId;
    await vi.waitFor(() => expect(survivors.every((g) => g.events.some((e) => e.startsWith(`${newJob}:`)))).toBe(true));
    sandbox.advance(STEP_MS);
    sandbox.advance(STEP_MS);
    await vi.waitFor(() => expect(survivors.every((g) => g.events.includes(`${newJob}:FAILED`))).toBe(true));
    const after = await Promise.all(survivors.map(jobListCalls));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const polling = (await Promise.all(survivors.map(jobListCalls))).map((n, i) => n - (after[i] ?? 0));
    expect(polling.filter((n) => n > 0)).toHaveLength(1);
    // Every survivor saw each state of each job once, in order for each job.
    for (const g of survivors) {
      expect(new Set(g.events).size).toBe(g.events.length);
      const newStates = g.events.filter((e) => e.startsWith(`${newJob}:`)).map((e) => e.split(':')[1]);
      expect(newStates.at(-1)).toBe('FAILED');
    }
  }, 60_000);
});
