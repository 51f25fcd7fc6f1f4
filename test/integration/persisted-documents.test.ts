/**
 * Trusted documents (PERSISTED_DOCUMENTS): a real Relay set, written by
 * relay-compiler from test/relay/, and a real GraphQL Codegen set, written by
 * the client preset (`persistedDocuments`) from test/operations/, served from
 * one folder. The clients name documents as their tools do: Relay's
 * `doc_id`, Codegen's `documentId` and the `persistedQuery` extension. With
 * PERSISTED_DOCUMENTS_ONLY any other document is refused, over HTTP and
 * graphql-ws, before any upstream call.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { generate } from '@graphql-codegen/cli';
import { createClient as createSseClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildSchema } from '../../src/schema/index.js';
import { PersistedDocuments, PersistedDocumentsError, readPersistedDocuments } from '../../src/server/persisted-documents.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { waitForOutput } from '../helpers/processes.js';
import { wsClient } from '../helpers/subscriptions.js';

// Under the project, so the generated TypeScript resolves the project's packages when imported.
const work = resolve('node_modules/.cache/duograph/trusted-documents');
const set = join(work, 'set');
let relay: Record<string, { params: { id: string; name: string } }>;
let codegen: Record<string, { __meta__?: { hash?: string } }>;
let mixed: TestApp;
let only: TestApp;

/** relay-compiler over test/relay/, against the schema a frontend gets (SDL without the federation directives). */
function buildRelaySet(): void {
  const dir = join(work, 'relay');
  mkdirSync(join(dir, 'src'), { recursive: true });
  mkdirSync(join(dir, 'src', '__generated__'), { recursive: true });
  copyFileSync('test/relay/ProjectJobs.ts', join(dir, 'src/ProjectJobs.ts'));
  copyFileSync('test/relay/ChannelStream.ts', join(dir, 'src/ChannelStream.ts'));
  // The client schema as shipped, and the Relay config of docs/operations.md as written there.
  copyFileSync('schema/client.graphql', join(dir, 'schema.graphql'));
  const documented = /A Relay config that[\s\S]*?```jsonc\n([\s\S]*?)```/.exec(readFileSync('docs/operations.md', 'utf8'))?.[1];
  if (!documented) throw new Error('docs/operations.md has no Relay config');
  const relayConfig = JSON.parse(documented) as { persistConfig: { file: string } };
  mkdirSync(join(dir, 'persisted-documents'), { recursive: true });
  // The compiler adds to the file it persists to, which must exist.
  writeFileSync(join(dir, relayConfig.persistConfig.file), '{}');
  // Only because the work folder sits under node_modules (see `work`), which Relay excludes by default.
  writeFileSync(join(dir, 'relay.config.json'), JSON.stringify({ ...relayConfig, excludes: ['**/__generated__/**'] }));
  const run = spawnSync(resolve('node_modules/.bin/relay-compiler'), [], { cwd: dir, encoding: 'utf8', env: { ...process.env, RUST_BACKTRACE: '0' } });
  if (run.status !== 0) throw new Error(`relay-compiler failed: ${run.stdout}${run.stderr}`);
  copyFileSync(join(dir, relayConfig.persistConfig.file), join(set, 'relay.json'));
}

/** GraphQL Codegen's client preset over test/operations/, with persisted documents. */
/** GraphQL Codegen's client preset over test/operations/, with the config of docs/operations.md as written there (its paths aside). */
async function buildCodegenSet(): Promise<void> {
  const out = join(work, 'codegen/');
  const documented = /A GraphQL Codegen config[\s\S]*?```jsonc\n([\s\S]*?)```/.exec(readFileSync('docs/operations.md', 'utf8'))?.[1];
  if (!documented) throw new Error('docs/operations.md has no Codegen config');
  const target = Object.values((JSON.parse(documented) as { generates: Record<string, Record<string, unknown>> }).generates)[0];
  // A federation router's operations, which the client schema does not have.
  const routerOnly = ['!test/operations/entities.graphql', '!test/operations/service-sdl.graphql'];
  await generate(
    { schema: 'schema/client.graphql', documents: ['test/operations/*.graphql', ...routerOnly], generates: { [out]: { ...target } }, silent: true },
    true,
  );
  copyFileSync(join(out, 'persisted-documents.json'), join(set, 'codegen.json'));
  // SafeInt mapped: a REST id is a number in the client's types, not unknown.
  expect(readFileSync(join(out, 'graphql.ts'), 'utf8')).toMatch(/restId: number/);
  expect(readFileSync(join(out, 'graphql.ts'), 'utf8')).not.toMatch(/restId: unknown/);
}

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(set, { recursive: true });
  buildRelaySet();
  await buildCodegenSet();
  relay = {
    query: (await import(join(work, 'relay/src/__generated__/ProjectJobsQuery.graphql.ts'))).default,
    mutation: (await import(join(work, 'relay/src/__generated__/ProjectJobsStarMutation.graphql.ts'))).default,
    subscription: (await import(join(work, 'relay/src/__generated__/ProjectJobsLogSubscription.graphql.ts'))).default,
    channel: (await import(join(work, 'relay/src/__generated__/ChannelStreamQuery.graphql.ts'))).default,
    refetch: (await import(join(work, 'relay/src/__generated__/ChannelStreamPaginationQuery.graphql.ts'))).default,
  };
  codegen = (await import(join(work, 'codegen/graphql.ts'))) as typeof codegen;
  // Sandboxes on a standing clock: reads of the two gateways compared with each other see the same jobs, however slow the machine.
  mixed = await createTestApp({ sandbox: { clock: 'manual' }, env: { PERSISTED_DOCUMENTS: set } });
  only = await createTestApp({ sandbox: { clock: 'manual' }, env: { PERSISTED_DOCUMENTS: set, PERSISTED_DOCUMENTS_ONLY: 'true', POLL_INTERVAL_MS: '100' } });
}, 120_000);
afterAll(async () => {
  await mixed?.close();
  await only?.close();
});

interface Answer {
  status: number;
  body: { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] };
}

async function post(t: TestApp, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', 'private-token': 'demo-token', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as never };
}

/** A GET with its parameters in the URL, and the header every GET needs (CSRF prevention). */
async function get(t: TestApp, params: Record<string, string>): Promise<Answer> {
  const response = await fetch(`${t.url}?${new URLSearchParams(params)}`, {
    headers: { accept: 'application/graphql-response+json', 'private-token': 'demo-token', 'graphql-preflight': '1' },
  });
  return { status: response.status, body: (await response.json()) as never };
}

/** The refusal of an id that is not in the set: 400, naming the id. */
function expectNotInList(answer: Answer, id: string): void {
  expect(answer.status).toBe(400);
  expect(answer.body.errors?.[0]).toMatchObject({
    message: `The document id "${id}" is not one of this gateway's trusted documents.`,
    extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST' },
  });
}

/**
 * Relay's log subscription by id, as a graphql-ws or graphql-sse client
 * sends it: an empty query, the id in the extension; the payload
 * docs/operations.md shows, with the id put in.
 */
function persistedLog(): { query: string; variables: Record<string, unknown>; extensions: Record<string, unknown> } {
  const documented = /sends\s+this very payload[\s\S]*?```json\n([\s\S]*?)```/.exec(readFileSync('docs/operations.md', 'utf8'))?.[1];
  if (!documented) throw new Error('docs/operations.md has no graphql-ws payload');
  return JSON.parse(documented.replace('<id>', relay.subscription?.params.id ?? '')) as ReturnType<typeof persistedLog>;
}

/** The events of a job log subscription, up to its last (complete) chunk. */
async function untilComplete(events: AsyncIterable<{ data?: unknown }>): Promise<unknown[]> {
  const seen: unknown[] = [];
  for await (const event of events) {
    seen.push(event);
    if ((event.data as { jobLogAppended?: { complete?: boolean } } | undefined)?.jobLogAppended?.complete) break;
  }
  return seen;
}

function hashOf(name: string): string {
  const hash = codegen[name]?.__meta__?.hash;
  if (!hash) throw new Error(`codegen wrote no hash for ${name}`);
  return hash;
}

describe('trusted documents', () => {
  it("runs Relay's documents by doc_id, as its network layer sends them, with only trusted documents allowed", async () => {
    const variables = { fullPath: 'platform/core', first: 2 };
    const { status, body } = await post(only, { doc_id: relay.query?.params.id, variables });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    const text = await post(mixed, {
      query:
        'query($fullPath: String!, $first: Int!) { project(fullPath: $fullPath) { pathWithNamespace jobs(first: $first) { nodes { restId name status id } } id } }',
      variables,
    });
    expect(body.data).toEqual(text.body.data);
    const star = await post(only, { doc_id: relay.mutation?.params.id, variables: { id: 'platform/core' } });
    expect(star.body.errors).toBeUndefined();
    expect(star.body.data).toMatchObject({ projectStar: { project: { starCount: expect.any(Number) } } });
  });

  it("refetches a Relay fragment that pages a channel's stream through node(id:), Channel being a Node", async () => {
    const hubzilla = { 'x-hubzilla-authorization': `Basic ${Buffer.from('demo:demo-pass').toString('base64')}` };
    const first = await post(only, { doc_id: relay.channel?.params.id, variables: {} }, hubzilla);
    expect(first.body.errors).toBeUndefined();
    const channel = (first.body.data as { channel: { id: string; nickname: string; stream: { edges: unknown[]; pageInfo: { endCursor: string } } } }).channel;
    expect(channel.id).toBe('gid://duograph/Channel/demo');
    expect(channel.stream.edges).toHaveLength(2);
    // Relay's pagination query: the fragment again, on node(id:), after the cursor.
    const next = await post(
      only,
      { doc_id: relay.refetch?.params.id, variables: { id: channel.id, first: 2, after: channel.stream.pageInfo.endCursor } },
      hubzilla,
    );
    expect(next.body.errors).toBeUndefined();
    const again = (next.body.data as { node: { id: string; nickname: string; stream: { edges: { node: { title: string } }[] } } }).node;
    expect(again).toMatchObject({ id: channel.id, nickname: 'demo' });
    expect(again.stream.edges.length).toBeGreaterThan(0);
    expect(again.stream.edges).not.toEqual(channel.stream.edges);
  });

  it("runs Codegen's documents by documentId and by the persistedQuery extension, with the hashes its generated documents carry", async () => {
    const reference = await post(mixed, { query: 'query Projects { projects(first: 5, orderBy: NAME, sort: ASC) { totalCount } }' });
    const byId = await post(only, { documentId: hashOf('ProjectsDocument') });
    expect(byId.body.errors).toBeUndefined();
    expect((byId.body.data as { projects: { totalCount: number } }).projects.totalCount).toBe(
      (reference.body.data as { projects: { totalCount: number } }).projects.totalCount,
    );
    const byExtension = await post(only, { extensions: { persistedQuery: { version: 1, sha256Hash: hashOf('ProjectsDocument') } } });
    expect(byExtension.body).toEqual(byId.body);
  });

  it('runs a trusted query by GET with the id in the URL, and refuses a mutation there as for any GET', async () => {
    const variables = JSON.stringify({ fullPath: 'platform/core', first: 2 });
    const byPost = await post(only, { doc_id: relay.query?.params.id, variables: JSON.parse(variables) });
    for (const name of ['documentId', 'doc_id']) {
      const byGet = await get(only, { [name]: relay.query?.params.id ?? '', variables });
      expect(byGet).toEqual({ status: 200, body: byPost.body });
    }
    only.resetCalls();
    const mutation = await get(only, { documentId: relay.mutation?.params.id ?? '', variables: JSON.stringify({ id: 'platform/core' }) });
    expect(mutation.status).toBe(405);
    expect(mutation.body.errors?.[0]?.message).toMatch(/mutation.*POST/i);
    expectNotInList(await get(only, { documentId: 'e'.repeat(64) }), 'e'.repeat(64));
    expect(only.calls()).toEqual([]);
  });

  it('refuses any other document when only trusted ones may run: a clear 400, and no upstream call', async () => {
    only.resetCalls();
    const text = await post(only, { query: '{ projects(first: 1) { nodes { name } } }' });
    expect(text.status).toBe(400);
    expect(text.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ID_REQUIRED');
    expect(text.body.errors?.[0]?.message).toMatch(/trusted documents only: send the id of a persisted document/);
    expectNotInList(await post(only, { documentId: 'f'.repeat(64) }), 'f'.repeat(64));
    expect(only.calls()).toEqual([]);
  });

  it('keeps accepting any query beside the ids when not only trusted ones may run, and GraphiQL with it', async () => {
    const text = await post(mixed, { query: '{ project(fullPath: "platform/core") { name } }' });
    expect(text.body).toEqual({ data: { project: { name: 'Core' } } });
    const byId = await post(mixed, { documentId: hashOf('ProjectsDocument') });
    expect(byId.body.errors).toBeUndefined();
    const neither = await post(mixed, { variables: {} });
    expect(neither.status).toBe(400);
    expect(neither.body.errors?.[0]?.message).toBe('Send a query, or the id of a persisted document.');
    const page = await fetch(mixed.url, { headers: { accept: 'text/html' } });
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    // Only trusted documents: the page would run nothing; the browser is told why there is none.
    const refused = await fetch(only.url, { headers: { accept: 'text/html' } });
    expect(refused.status).toBe(404);
    expect(await refused.text()).toMatch(/^GraphiQL is off: this gateway runs trusted documents only \(PERSISTED_DOCUMENTS_ONLY\)/);
    // The page is 9 MB, compressed on its first request: on a busy machine that alone can take tens of seconds.
  }, 180_000);

  it('runs trusted subscriptions over graphql-ws by id, and refuses a text there too', async () => {
    const client = wsClient(only);
    try {
      const events = await untilComplete(client.iterate(persistedLog()));
      // The job has finished: its log, the last chunk marked complete.
      expect(events.at(-1)).toEqual({ data: { jobLogAppended: { text: expect.stringContaining('Job succeeded'), complete: true } } });
      await expect(
        (async () => {
          for await (const _ of client.iterate({ query: 'subscription { jobLogAppended(projectId: "platform/core", jobId: "1002") { text } }' })) break;
        })(),
      ).rejects.toMatchObject([{ message: expect.stringMatching(/trusted documents only/), extensions: { code: 'PERSISTED_QUERY_ID_REQUIRED' } }]);
    } finally {
      await client.dispose();
    }
  });

  it('runs a trusted subscription over SSE by its persistedQuery extension', async () => {
    const client = createSseClient({ url: only.url.href, headers: { 'private-token': 'demo-token' }, retryAttempts: 0, singleConnection: false });
    let events: unknown[];
    try {
      events = await untilComplete(client.iterate(persistedLog()));
    } finally {
      client.dispose();
    }
    expect(events.at(-1)).toEqual({ data: { jobLogAppended: { text: expect.stringContaining('Job succeeded'), complete: true } } });
  });

  it('refuses to start on a set that no longer fits the schema, naming the file and the id', async () => {
    const stale = join(work, 'stale.json');
    writeFileSync(stale, JSON.stringify({ 'old-1': 'query Old { project(fullPath: "x") { removedField } }' }));
    const child = spawn(process.execPath, ['dist/src/main.js', 'serve'], {
      env: { ...process.env, PERSISTED_DOCUMENTS: stale, GITLAB_URL: 'http://127.0.0.1:9', HUBZILLA_URL: 'http://127.0.0.1:9', PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const [line] = await waitForOutput(child, /duograph: cannot start: .*/, 'the start refusal');
    const code = await new Promise((done) => child.once('exit', done));
    expect(code).toBe(2);
    expect(line).toMatch(/PERSISTED_DOCUMENTS: .*stale\.json: document old-1 does not fit the schema: Cannot query field "removedField"/);
    expect(() => loadConfig({ PERSISTED_DOCUMENTS_ONLY: 'true' })).toThrow('PERSISTED_DOCUMENTS_ONLY needs PERSISTED_DOCUMENTS');
    // A whole gateway process starts (and refuses): bounded by waitForOutput's backstop, not by the default 20 s.
  }, 180_000);

  it('refuses a set it cannot read, naming the file: missing, not JSON, an empty folder, a document that is not text, an id with spaces', () => {
    const bad = join(work, 'bad');
    mkdirSync(join(bad, 'empty'), { recursive: true });
    writeFileSync(join(bad, 'broken.json'), '{"a": ');
    writeFileSync(join(bad, 'number.json'), '{"a": 42}');
    writeFileSync(join(bad, 'spaces.json'), '{"an id": "{ __typename }"}');
    const load = (path: string) => () => new PersistedDocuments(false, readPersistedDocuments(path), buildSchema());
    expect(load(join(bad, 'missing.json'))).toThrow(
      new PersistedDocumentsError(`${join(bad, 'missing.json')}: cannot be read (PERSISTED_DOCUMENTS names a missing file or folder)`),
    );
    expect(load(join(bad, 'broken.json'))).toThrow(new PersistedDocumentsError(`${join(bad, 'broken.json')}: not a JSON file`));
    expect(load(join(bad, 'empty'))).toThrow(new PersistedDocumentsError(`${join(bad, 'empty')}: the folder holds no .json file`));
    expect(load(join(bad, 'number.json'))).toThrow(new PersistedDocumentsError(`${join(bad, 'number.json')}: the document of a is not a string`));
    expect(load(join(bad, 'spaces.json'))).toThrow(/"an id" is not a document id/);
  });

  it("reads Apollo's persisted query manifest too, and refuses one id naming two documents", () => {
    const manifest = join(work, 'manifest.json');
    writeFileSync(
      manifest,
      JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: 'a1', name: 'Me', type: 'query', body: '{ __typename }' }] }),
    );
    const documents = new PersistedDocuments(true, readPersistedDocuments(manifest), buildSchema());
    expect(documents.resolve({ documentId: 'a1' })).toMatchObject({ query: '{ __typename }' });
    expect(
      () =>
        new PersistedDocuments(
          false,
          [
            ['x', '{ __typename }', 'a.json'],
            ['x', 'query Other { __typename }', 'b.json'],
          ],
          buildSchema(),
        ),
    ).toThrow(new PersistedDocumentsError('b.json: id x names two different documents'));
  });
});
