/**
 * WORKERS=2 as an operator runs it: `node dist/src/main.js` with the built-in
 * sandbox, in a process of its own. A webhook received by any worker reaches
 * a subscriber on any other through the primary, dedup holds across workers,
 * /metrics counts the whole group, a killed worker is replaced while the
 * others keep serving, and SIGTERM drains every worker before the primary
 * exits 0. Each request below goes on a connection of its own, so the
 * primary's round-robin spreads them over both workers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient as createSseClient } from 'graphql-sse';
import { Agent, fetch as undiciFetch } from 'undici';
import { Reader, SECRET, sseSubscribe } from '../helpers/subscriptions.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = (name: string) => readFileSync(new URL(`../fixtures/gitlab-webhooks/${name}`, import.meta.url), 'utf8');

interface Group {
  child: ChildProcess;
  url: URL;
  out: string[];
  workerPids(): number[];
}

async function startGroup(env: Record<string, string> = {}): Promise<Group> {
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: root,
    env: { ...process.env, WORKERS: '2', PORT: '0', HOST: '127.0.0.1', GITLAB_WEBHOOK_SECRET: SECRET, LOG_LEVEL: 'warn', LOG_FILE: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => out.push(...chunk.toString().split('\n').filter(Boolean)));
  child.stderr?.on('data', (chunk: Buffer) => out.push(...chunk.toString().split('\n').filter(Boolean)));
  const url = await vi.waitFor(
    () => {
      const line = out.find((l) => l.startsWith('duograph listening with 2 workers'));
      if (!line) throw new Error(`not listening yet: ${out.join(' | ').slice(-500)}`);
      return new URL(/GraphiQL at (\S+)/.exec(line)?.[1] ?? '');
    },
    { timeout: 30_000, interval: 100 },
  );
  const workerPids = () => {
    const live = new Map<number, number>();
    for (const line of out) {
      const ready = /worker (\d+) \(pid (\d+)\) ready/.exec(line);
      if (ready) live.set(Number(ready[1]), Number(ready[2]));
      const exited = /worker (\d+) \(pid \d+\) exited/.exec(line);
      if (exited) live.delete(Number(exited[1]));
    }
    return [...live.values()];
  };
  return { child, url, out, workerPids };
}

/** One request on a connection of its own (no keep-alive), so each lands on the next worker. */
function send(url: URL, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { method, agent: false, headers: { connection: 'close', ...headers } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const webhook = (url: URL, body: string, key: string) =>
  send(url, 'POST', '/webhooks/gitlab', body, {
    'content-type': 'application/json',
    'x-gitlab-token': SECRET,
    'x-gitlab-event': 'Job Hook',
    'idempotency-key': key,
  });

const query = (url: URL, text: string) =>
  send(url, 'POST', '/graphql', JSON.stringify({ query: text }), { 'content-type': 'application/json', 'private-token': 'demo-token' });

describe('WORKERS=2', () => {
  let group: Group;
  beforeAll(async () => {
    // Round-robin (Node's own setting), so that two connections in a row land on two workers.
    group = await startGroup({ NODE_CLUSTER_SCHED_POLICY: 'rr' });
  }, 40_000);
  afterAll(() => {
    if (group.child.exitCode === null) group.child.kill('SIGKILL');
  });

  it('delivers a webhook received by any worker to a subscriber on any worker, and drops a redelivery that lands elsewhere', async () => {
    // Job 1005 (platform/core) waits as a manual job: nothing but these events moves it.
    const sub = sseSubscribe(group, 'subscription { jobStatusUpdated(projectId: "1", jobId: "1005") { restId status } }');
    expect((await sub.next(10_000)).data).toEqual({ jobStatusUpdated: { restId: 1005, status: 'MANUAL' } });
    const base = { ...(JSON.parse(fixture('job_event.payload.json')) as Record<string, unknown>), project_id: 1, build_id: 1005, pipeline_id: 101 };
    const running = JSON.stringify({ ...base, build_status: 'running', build_started_at: '2024-04-01T13:00:00.000Z' });
    const success = JSON.stringify({
      ...base,
      build_status: 'success',
      build_started_at: '2024-04-01T13:00:00.000Z',
      build_finished_at: '2024-04-01T13:01:00.000Z',
    });
    expect(JSON.parse((await webhook(group.url, running, 'w-1')).body)).toEqual({ status: 'accepted' });
    expect((await sub.next(10_000)).data).toEqual({ jobStatusUpdated: { restId: 1005, status: 'RUNNING' } });
    expect(JSON.parse((await webhook(group.url, success, 'w-2')).body)).toEqual({ status: 'accepted' });
    expect((await sub.next(10_000)).data).toEqual({ jobStatusUpdated: { restId: 1005, status: 'SUCCESS' } });
    // The same deliveries again, on new connections: whichever worker they reach, the primary's keys catch them.
    expect(JSON.parse((await webhook(group.url, running, 'w-1')).body)).toEqual({ status: 'duplicate' });
    expect(JSON.parse((await webhook(group.url, success, 'w-2')).body)).toEqual({ status: 'duplicate' });
    await sub.stop();
  }, 40_000);

  it('answers /readyz for the group, and /metrics counts the operations of every worker', async () => {
    expect((await send(group.url, 'GET', '/readyz')).status).toBe(200);
    const before = Number(
      /duograph_graphql_operations_total\{operation_name="Probe",operation_type="query",outcome="success"\} (\d+)/.exec(
        (await send(group.url, 'GET', '/metrics')).body,
      )?.[1] ?? 0,
    );
    for (let i = 0; i < 6; i++) expect((await query(group.url, 'query Probe { project(id: 1) { name } }')).status).toBe(200);
    const metrics = (await send(group.url, 'GET', '/metrics')).body;
    const after = Number(/duograph_graphql_operations_total\{operation_name="Probe",operation_type="query",outcome="success"\} (\d+)/.exec(metrics)?.[1] ?? 0);
    expect(after - before).toBe(6);
  });

  it('replaces a worker that dies, and the other keeps serving meanwhile, its open subscriptions included', async () => {
    const [victim, survivor] = group.workerPids();
    expect(victim).toBeDefined();
    expect(survivor).toBeDefined();
    // Two new long-lived connections in a row (an agent of their own each, so no pooled connection is reused):
    // the primary's round-robin puts one on each worker.
    const watch = 'subscription { jobStatusUpdated(projectId: "1", jobId: "1005") { restId status } }';
    const fresh = () =>
      new Reader(
        createSseClient({
          url: group.url.href,
          headers: { 'private-token': 'demo-token' },
          retryAttempts: 0,
          singleConnection: false,
          fetchFn: (input: RequestInfo | URL, init?: RequestInit) =>
            undiciFetch(input as string, { ...(init as object), dispatcher: new Agent() }) as unknown as Promise<Response>,
        }).iterate({ query: watch }),
      );
    const subs = [fresh()];
    expect((await subs[0]?.next(10_000))?.data).toBeDefined();
    subs.push(fresh());
    expect((await subs[1]?.next(10_000))?.data).toBeDefined();
    process.kill(victim as number, 'SIGKILL');
    await vi.waitFor(() => expect(group.out.some((l) => l.includes(`(pid ${victim}) exited (SIGKILL); starting another`))).toBe(true));
    expect((await query(group.url, '{ project(id: 1) { name } }')).body).toContain('"name":"Core"');
    await vi.waitFor(() => expect(group.workerPids()).toHaveLength(2), { timeout: 20_000, interval: 100 });
    expect(group.workerPids()).not.toContain(victim);
    expect((await send(group.url, 'GET', '/readyz')).status).toBe(200);
    // The subscription on the surviving worker is still open: a webhook on any worker reaches it.
    const base = { ...(JSON.parse(fixture('job_event.payload.json')) as Record<string, unknown>), project_id: 1, build_id: 1005, pipeline_id: 101 };
    const failed = JSON.stringify({
      ...base,
      build_status: 'failed',
      build_started_at: '2024-04-01T13:10:00.000Z',
      build_finished_at: '2024-04-01T13:11:00.000Z',
    });
    expect(JSON.parse((await webhook(group.url, failed, 'w-crash')).body)).toEqual({ status: 'accepted' });
    const results = await Promise.all(subs.map((sub) => sub.next(10_000).catch(() => null)));
    expect(results.filter((r) => (r?.data as { jobStatusUpdated?: { status: string } } | undefined)?.jobStatusUpdated?.status === 'FAILED')).toHaveLength(1);
    for (const sub of subs) await sub.stop();
  }, 40_000);

  it('drains every worker on SIGTERM, then the primary exits 0', async () => {
    const pids = group.workerPids();
    const exited = new Promise<number | null>((resolve) => group.child.once('exit', (code) => resolve(code)));
    group.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
  }, 40_000);
});

describe('WORKERS=2 when a worker is killed', () => {
  let group: Group;
  beforeAll(async () => {
    group = await startGroup();
  }, 40_000);
  afterAll(() => {
    if (group.child.exitCode === null) group.child.kill('SIGKILL');
  });

  it('leaves no connection opened right after the kill waiting: each gets an answer or a close', async () => {
    const [victim] = group.workerPids();
    process.kill(victim as number, 'SIGKILL');
    // A hundred connections at once, before the primary has heard: none may be handed to the dead worker and lost.
    const outcomes = await Promise.all(
      Array.from(
        { length: 100 },
        () =>
          new Promise<string>((resolve) => {
            const req = request(new URL('/healthz', group.url), { agent: false, headers: { connection: 'close' } }, (res) => {
              res.resume();
              res.on('end', () => resolve('answered'));
              res.on('error', () => resolve('closed'));
            });
            req.on('error', () => resolve('closed'));
            // Far past any answer on a busy machine: only a connection nobody will ever serve gets here.
            req.setTimeout(60_000, () => {
              resolve('waiting');
              req.destroy();
            });
            req.end();
          }),
      ),
    );
    expect(outcomes.filter((o) => o === 'waiting')).toHaveLength(0);
    expect(outcomes.filter((o) => o === 'answered').length).toBeGreaterThan(0);
    await vi.waitFor(() => expect(group.workerPids()).toHaveLength(2), { timeout: 30_000, interval: 100 });
    expect((await query(group.url, '{ project(id: 1) { name } }')).body).toContain('"name":"Core"');
  }, 120_000);
});
