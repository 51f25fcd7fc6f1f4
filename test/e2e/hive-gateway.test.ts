/**
 * duograph's subscriptions through a router: Hive Gateway's runtime (what
 * the `hive-gateway` command serves) over a supergraph of duograph and the
 * deployments subgraph, configured as docs/federation.md says, once with
 * subscriptions to duograph over WebSocket and once over HTTP callbacks.
 * Clients subscribe to the gateway over SSE (graphql-sse's client) with
 * their own tokens; each event of duograph's is joined with Job.deployments
 * from the other subgraph, and two users watching at once never see each
 * other's jobs.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { createGatewayRuntime, type GatewayConfig, type GatewayRuntime } from '@graphql-hive/gateway-runtime';
import { MemPubSub } from '@graphql-hive/pubsub';
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STEP_MS } from '../../src/sandbox/gitlab/server.js';
import { composeSupergraph, duographSubgraph } from '../../src/server/supergraph.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { type DeploymentRecord, type DeploymentsSubgraph, startDeploymentsSubgraph } from '../helpers/deployments-subgraph.js';
import { expectAllReleased } from '../helpers/subscriptions.js';

/** Waits for events, bounded only by the test's own timeout: they come when the machine gets to them. */
const EVENTS = { timeout: 100_000, interval: 20 };
/** The address docs/federation.md gives the gateway; the test puts its own in its place. */
const DOCS_ORIGIN = 'http://router.internal:4000';
const DEPLOYMENTS: DeploymentRecord[] = [
  { id: 'd1', environment: 'staging', projectId: 'gid://duograph/Project/1', jobId: 'gid://duograph/Job/1/1013' },
  { id: 'd2', environment: 'infra', projectId: 'gid://duograph/Project/2', jobId: 'gid://duograph/Job/2/3001' },
];

/** The gateway.config.ts of docs/federation.md whose first line names `label`, as a module this test can import. */
async function docsConfig(label: string, origin: string, folder: string): Promise<GatewayConfig> {
  const docs = readFileSync(new URL('../../docs/federation.md', import.meta.url), 'utf8');
  const block = [...docs.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] ?? '').find((code) => code.startsWith(`// gateway.config.ts: ${label}`));
  if (!block) throw new Error(`docs/federation.md has no gateway.config.ts for ${label}`);
  const file = join(folder, `${label.replace(/\W+/g, '-')}.mjs`);
  await writeFile(file, block.replaceAll(DOCS_ORIGIN, origin));
  return ((await import(pathToFileURL(file).href)) as { gatewayConfig: GatewayConfig }).gatewayConfig;
}

type Event = { data?: { jobStatusUpdated: { restId: number; status: string; deployments: { id: string; environment: string }[] } }; errors?: unknown[] };

/** A client of the gateway over SSE: its events as they come, and a way to leave. */
function follow(url: string, token: string, query: string) {
  const client = createClient({ url, headers: { 'private-token': token }, retryAttempts: 0, singleConnection: false });
  const events: Event[] = [];
  const state: { error?: unknown; done: boolean } = { done: false };
  const iterator = client.iterate<Event['data']>({ query });
  void (async () => {
    try {
      for await (const event of iterator) events.push(event as Event);
    } catch (error) {
      state.error = error;
    } finally {
      state.done = true;
    }
  })();
  return {
    events,
    state,
    leave: async () => {
      await iterator.return?.();
      client.dispose();
    },
  };
}

const WATCH_1013 = 'subscription { jobStatusUpdated(projectId: "platform/core", jobId: "1013") { restId status deployments { id environment } } }';
const WATCH_INFRA = 'subscription { jobStatusUpdated(projectId: "platform/infra", initialLimit: 5) { restId status deployments { id environment } } }';

describe.each([
  { transport: 'WebSocket', label: 'subscriptions to duograph over WebSocket (graphql-ws)' },
  { transport: 'HTTP callbacks', label: 'subscriptions to duograph over HTTP callbacks (callback/1.0)' },
])('Hive Gateway, subscriptions to duograph over $transport', { timeout: 180_000 }, ({ label }) => {
  let t: TestApp;
  let deployments: DeploymentsSubgraph;
  let gateway: GatewayRuntime;
  let server: Server;
  let url: string;
  let folder: string;

  beforeAll(async () => {
    // The gateway's address first: duograph must allow its callback URLs.
    server = createServer((req, res) => void gateway(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    url = `${origin}/graphql`;
    t = await createTestApp({
      sandbox: { clock: 'manual' },
      env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40', SUBSCRIPTION_CALLBACK_URLS: `${origin}/callback/` },
    });
    deployments = await startDeploymentsSubgraph(DEPLOYMENTS);
    folder = await mkdtemp(join(tmpdir(), 'duograph-hive-'));
    const config = await docsConfig(label, origin, folder);
    const supergraph = composeSupergraph([duographSubgraph(t.url.href), { name: 'deployments', url: deployments.url, sdl: deployments.sdl }]);
    // The hive-gateway command gives a pubsub of its own; the runtime takes one.
    gateway = createGatewayRuntime({ ...config, supergraph, pubsub: new MemPubSub(), logging: false } as GatewayConfig);
  }, 120_000);

  afterAll(async () => {
    await gateway?.dispose();
    await new Promise<void>((resolve) => {
      server?.close(() => resolve());
      server?.closeAllConnections();
    });
    await deployments?.close();
    await t?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it("delivers a job's changes joined with the other subgraph's deployments, and stops polling when the client leaves", async () => {
    const watch = follow(url, 'demo-token', WATCH_1013);
    await vi.waitFor(() => expect(watch.events).toHaveLength(1), EVENTS);
    expect(watch.events[0]).toEqual({
      data: { jobStatusUpdated: { restId: 1013, status: 'RUNNING', deployments: [{ id: 'd1', environment: 'staging' }] } },
    });
    t.sandbox.advance(STEP_MS);
    await vi.waitFor(() => expect(watch.events.map((e) => e.data?.jobStatusUpdated.status)).toEqual(['RUNNING', 'SUCCESS']), EVENTS);
    expect(watch.state.error).toBeUndefined();
    await watch.leave();
    await expectAllReleased(t);
  });

  it('keeps two users apart: each sees only what their own token may, with their own token on every GitLab call', async () => {
    t.resetCalls();
    // bob maintains platform/infra; demo is a Guest there and may not read its jobs.
    const bob = follow(url, 'bob-token', WATCH_INFRA);
    const demo = follow(url, 'demo-token', WATCH_INFRA);
    await vi.waitFor(() => expect(bob.events.length).toBeGreaterThan(0), EVENTS);
    await vi.waitFor(() => expect(demo.events.length + (demo.state.error ? 1 : 0)).toBeGreaterThan(0), EVENTS);
    expect(bob.events[0]).toEqual({
      data: { jobStatusUpdated: { restId: 3001, status: 'SUCCESS', deployments: [{ id: 'd2', environment: 'infra' }] } },
    });
    expect(JSON.stringify(demo.events)).not.toContain('3001');
    expect(JSON.stringify(demo.events) + String(demo.state.error)).toMatch(/FORBIDDEN|forbidden|Forbidden/);
    // Each subscription read platform/infra's jobs with its own caller's token: nothing went out under the other's.
    const infraCalls = t.calls().filter((c) => /^\/api\/v4\/projects\/(2|platform%2Finfra)\/jobs/.test(c.path));
    expect(new Set(infraCalls.map((c) => c.headers['private-token']))).toEqual(new Set(['bob-token', 'demo-token']));
    await bob.leave();
    await demo.leave();
    await expectAllReleased(t);
  });
});
