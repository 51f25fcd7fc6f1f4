import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createTestApp, type TestApp } from '../helpers/app.js';

const basic = (login: string, password: string) => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;

/** Two users with different visibility and different credentials for both upstreams. */
const USERS = {
  demo: { token: 'demo-token', hubzilla: basic('demo', 'demo-pass'), channel: 'demo', other: { token: 'alice-token', hubzilla: basic('alice', 'alice-pass') } },
  alice: {
    token: 'alice-token',
    hubzilla: basic('alice', 'alice-pass'),
    channel: 'alice',
    other: { token: 'demo-token', hubzilla: basic('demo', 'demo-pass') },
  },
} as const;

const QUERY = `{
  secret: project(fullPath: "alice/secret-notes") { id name }
  projects(first: 50, orderBy: ID, sort: ASC) { nodes { pathWithNamespace visibility forkedFrom { pathWithNamespace } } }
  channel { nickname name stream(since: "2020-01-01T00:00:00Z", first: 5) { nodes { author { address } } } }
}`;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(async () => {
  await t.close();
});

describe('two users through the same gateway at the same time', () => {
  it("never see each other's data, and each upstream call carries only its caller's credentials and no cookie", async () => {
    t.resetCalls();
    t.resetHubzillaCalls();
    const baseline = {
      demo: await t.gql(QUERY, {}, { token: USERS.demo.token, headers: { 'x-hubzilla-authorization': USERS.demo.hubzilla } }),
      alice: await t.gql(QUERY, {}, { token: USERS.alice.token, headers: { 'x-hubzilla-authorization': USERS.alice.hubzilla } }),
    };
    expect(baseline.demo.errors).toBeUndefined();
    expect(baseline.alice.errors).toBeUndefined();
    expect(baseline.demo.data?.secret).toBeNull();
    expect(baseline.alice.data?.secret).toMatchObject({ name: expect.any(String) });
    expect((baseline.demo.data?.channel as { nickname: string } | undefined)?.nickname).toBe('demo');
    expect((baseline.alice.data?.channel as { nickname: string } | undefined)?.nickname).toBe('alice');
    expect(JSON.stringify(baseline.demo.data)).not.toContain('secret-notes');

    // Many rounds, both users interleaved and concurrent: every answer equals that user's own baseline.
    const rounds = 40;
    const runs: Promise<void>[] = [];
    for (let i = 0; i < rounds; i++) {
      for (const name of ['demo', 'alice'] as const) {
        const user = USERS[name];
        runs.push(
          t.gql(QUERY, {}, { token: user.token, headers: { 'x-hubzilla-authorization': user.hubzilla } }).then((res) => {
            expect(res.errors).toBeUndefined();
            expect(res.data).toEqual(baseline[name].data);
          }),
        );
      }
    }
    await Promise.all(runs);

    // Every GitLab call carries exactly one of the two tokens; every Hubzilla call exactly one Basic credential; no cookie anywhere.
    const gitlabCalls = t.calls();
    const hubzillaCalls = t.hubzillaCalls();
    expect(gitlabCalls.length).toBeGreaterThan(0);
    expect(hubzillaCalls.length).toBeGreaterThan(0);
    for (const call of gitlabCalls) {
      expect(['demo-token', 'alice-token']).toContain(call.headers['private-token']);
      expect(call.headers.authorization).toBeUndefined();
      expect(call.headers.cookie).toBeUndefined();
    }
    for (const call of hubzillaCalls) {
      expect([USERS.demo.hubzilla, USERS.alice.hubzilla]).toContain(call.headers.authorization);
      expect(call.headers['private-token']).toBeUndefined();
      expect(call.headers.cookie).toBeUndefined();
    }
    // The secret project is asked for with each token, and answered for demo by GitLab's own 404. A user's identical
    // reads in flight at once may share one call; the other user's never do, so each token asks at least twice
    // (its baseline, then its rounds) and at most once per request.
    const secretReads = gitlabCalls.filter((c) => c.path === '/api/v4/projects/alice%2Fsecret-notes');
    for (const token of ['alice-token', 'demo-token']) {
      const reads = secretReads.filter((c) => c.headers['private-token'] === token).length;
      expect(reads).toBeGreaterThanOrEqual(2);
      expect(reads).toBeLessThanOrEqual(rounds + 1);
    }
  });

  it('sends a Hubzilla session cookie back to nobody', async () => {
    t.resetHubzillaCalls();
    // The hub answers with Set-Cookie; a gateway that kept it would authenticate the next caller with it.
    await t.gql(`{ channel { nickname } }`, {}, { headers: { 'x-hubzilla-authorization': USERS.alice.hubzilla } });
    const anonymous = await t.gql(`{ channel { nickname } }`, {}, { token: null });
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(t.hubzillaCalls().every((c) => c.headers.cookie === undefined)).toBe(true);
  });

  it('keeps subscription events apart: a user never gets an event of a project only the other can see', async () => {
    const url = t.url.href.replace(/^http/, 'ws');
    const clientFor = (token: string) => createClient({ url, webSocketImpl: WebSocket, connectionParams: { 'Private-Token': token }, retryAttempts: 0 });
    const demo = clientFor('demo-token');
    const alice = clientFor('alice-token');
    const first = (client: ReturnType<typeof clientFor>, projectId: string) =>
      new Promise<{ data?: unknown; errors?: readonly { extensions?: Record<string, unknown> }[] }>((resolve) => {
        const stop = client.subscribe(
          { query: `subscription { projectImportStatusUpdated(projectId: "${projectId}") { pathWithNamespace importStatus } }` },
          {
            next: (value) => {
              stop();
              resolve(value as never);
            },
            error: (error) => resolve({ errors: [{ extensions: { code: String(error) } }] }),
            complete: () => resolve({}),
          },
        );
      });
    const secretId = String(
      (await t.gql<{ project: { restId: number } }>(`{ project(fullPath: "alice/secret-notes") { restId } }`, {}, { token: 'alice-token' })).data?.project
        .restId,
    );
    const [forAlice, forDemo] = await Promise.all([first(alice, secretId), first(demo, secretId)]);
    expect(forAlice.errors).toBeUndefined();
    expect(forAlice.data).toEqual({ projectImportStatusUpdated: { pathWithNamespace: 'alice/secret-notes', importStatus: expect.any(String) } });
    expect(forDemo.data ?? null).toBeNull();
    expect(['NOT_FOUND', 'FORBIDDEN']).toContain(forDemo.errors?.[0]?.extensions?.code);
    await demo.dispose();
    await alice.dispose();
  });
});
