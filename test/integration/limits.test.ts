import { Readable } from 'node:stream';
import { Agent, fetch as undiciFetch } from 'undici';
import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(async () => {
  await t.close();
});

afterEach(() => {
  t.resetCalls();
  t.resetHubzillaCalls();
});

function expectNoUpstreamCall() {
  expect(t.calls()).toHaveLength(0);
  expect(t.hubzillaCalls()).toHaveLength(0);
}

async function post(body: string | ReadableStream, headers: Record<string, string> = {}) {
  // A connection of its own: the gateway closes the connection of a refused oversized body, and a pooled one the
  // client picks before it has seen that close fails with "other side closed" (seen once under three suites at once).
  const response = await undiciFetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'private-token': 'demo-token', ...headers },
    body,
    duplex: 'half',
    dispatcher: new Agent({ pipelining: 0 }),
  } as Parameters<typeof undiciFetch>[1]);
  return { status: response.status, body: (await response.json()) as { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] } };
}

const nested = (depth: number) => `{ project(fullPath: "platform/core") { ${'forkedFrom { '.repeat(depth)}id${' }'.repeat(depth)} } }`;

describe('operation limits refuse an operation before any upstream call', () => {
  it.each([
    { name: 'a selection deeper than MAX_DEPTH (15)', query: nested(20), message: /depth limit of 15 exceeded, found 22/ },
    {
      name: 'more aliases than MAX_ALIASES (30)',
      query: `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: project(id: "${i + 1}") { id }`).join(' ')} }`,
      message: /Aliases limit of 30 exceeded, found 31/,
    },
    {
      name: 'thousands of aliases',
      query: `{ ${Array.from({ length: 5000 }, (_, i) => `a${i}: __typename`).join(' ')} }`,
      message: /Token limit of 2000 exceeded/,
    },
    {
      name: 'more tokens than MAX_TOKENS (2000)',
      query: `{ project(fullPath: "platform/core") { ${'id '.repeat(2100)}} }`,
      message: /Token limit of 2000 exceeded/,
    },
    {
      name: 'more directives than MAX_DIRECTIVES (20)',
      query: `{ project(fullPath: "platform/core") { id ${'@include(if: true) '.repeat(21)}} }`,
      message: /Directives limit of 20 exceeded, found 21/,
    },
    {
      name: 'a fragment cycle',
      query: `{ project(fullPath: "platform/core") { ...A } } fragment A on Project { forkedFrom { ...B } } fragment B on Project { forkedFrom { ...A } }`,
      message: /Cannot spread fragment "A" within itself/,
    },
  ])('$name', async ({ query, message }) => {
    const res = await t.gql(query);
    expect(res.data ?? null).toBeNull();
    expect(res.errors?.length).toBeGreaterThan(0);
    expect(res.errors?.map((e) => e.message).join('\n')).toMatch(message);
    expectNoUpstreamCall();
  });

  it("refuses 100 projects asking 100 jobs each asking their project's forkedFrom, with the estimate", async () => {
    const res = await t.gql(`{ projects(first: 100) { nodes { jobs(first: 100) { nodes { project { forkedFrom { name } } } } } } }`);
    expect(res.data ?? null).toBeNull();
    expect(res.errors).toHaveLength(1);
    // 1 page of projects + 100 × (1 page of jobs + 100 × (project + forkedFrom)).
    expect(res.errors?.[0]?.message).toBe(
      'The operation could cause up to 20101 upstream calls, more than the limit of 2000: ask for smaller pages (first/last) or fewer nested lists.',
    );
    expect(res.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', cost: { estimated: 20101, limit: 2000 } });
    expectNoUpstreamCall();
  });

  it('counts nothing for __typename, which clients add everywhere', async () => {
    const res = await t.gql(`{ __typename projects(first: 100) { __typename nodes { __typename jobs(first: 19) { __typename nodes { __typename id } } } } }`);
    expect(res.errors?.find((e) => e.extensions?.cost)).toBeUndefined();
  });

  it('counts page sizes given in variables', async () => {
    const query = `query($n: Int) { projects(first: $n) { nodes { forks(first: $n) { nodes { forkedFrom { name } } } } } }`;
    const refused = await t.gql(query, { n: 100 });
    expect(refused.errors?.[0]?.extensions?.cost).toEqual({ estimated: 1 + 100 * (1 + 100), limit: 2000 });
    expectNoUpstreamCall();
    const allowed = await t.gql(query, { n: 5 });
    expect(allowed.errors).toBeUndefined();
    // The same text and variables again: the kept estimate refuses and allows exactly as the first did.
    const refusedAgain = await t.gql(query, { n: 100 });
    expect(refusedAgain.errors?.[0]?.extensions?.cost).toEqual({ estimated: 1 + 100 * (1 + 100), limit: 2000 });
    expect((await t.gql(query, { n: 5 })).errors).toBeUndefined();
  });

  it('lets the largest benchmark workload through (1,000 projects over 10 aliased pages)', async () => {
    const text = await readFile(new URL('../../bench/workloads/scale-1000.graphql', import.meta.url), 'utf8');
    const res = await t.gql(text.replace(/search: "bulk-project", /g, ''));
    expect(res.errors?.find((e) => e.extensions?.cost)).toBeUndefined();
  });

  it('caps first and last at 100 without a call', async () => {
    const res = await t.gql(`{ projects(first: 101) { totalCount } }`);
    expect(res.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    expectNoUpstreamCall();
  });

  it('hides field suggestions', async () => {
    const res = await t.gql(`{ projectz(fullPath: "platform/core") { id } }`);
    expect(res.errors?.[0]?.message).not.toMatch(/Did you mean/);
    expect(res.errors?.[0]?.message).toMatch(/Cannot query field "projectz" on type "Query"/);
    // Instead of a bare "[Suggestion hidden]": where the names are, and the setting that shows them.
    expect(res.errors?.[0]?.message).toBe(
      'Cannot query field "projectz" on type "Query". (Suggestions are hidden: the schema\'s names are in GraphiQL\'s Docs, by introspection, or in schema/schema.graphql; FIELD_SUGGESTIONS=true shows them here.)',
    );
  });

  it('answers 413 to a body above MAX_BODY_BYTES, by Content-Length or by size', async () => {
    const huge = JSON.stringify({ query: `{ projects(search: "${'x'.repeat(1_100_000)}", first: 1) { totalCount } }` });
    const declared = await post(huge);
    expect(declared.status).toBe(413);
    expect(declared.body.errors?.[0]).toMatchObject({ message: 'The request body is larger than 1048576 bytes.', extensions: { code: 'BAD_USER_INPUT' } });
    // Chunked: no Content-Length, the size is found while reading.
    const chunked = await post(Readable.toWeb(Readable.from([Buffer.from(huge)])) as ReadableStream);
    expect(chunked.status).toBe(413);
    expectNoUpstreamCall();
  });

  it('takes a large but allowed body', async () => {
    const res = await post(JSON.stringify({ query: `{ projects(first: 1) { totalCount } }`, variables: { pad: 'x'.repeat(500_000) } }));
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
  });
});

describe('limits are configurable', () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await createTestApp({ env: { MAX_DEPTH: '4', MAX_COST: '1', MAX_ALIASES: '1', FIELD_SUGGESTIONS: 'true' } });
  });
  afterAll(async () => {
    await strict.close();
  });

  /** The refusal an SSE subscription gets from the cost limit, with its estimate. */
  const subscribeOverSse = async (query: string) => {
    const response = await fetch(strict.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'private-token': 'demo-token' },
      body: JSON.stringify({ query }),
    });
    return response.text();
  };

  it('refuses a subscription over the cost limit before it starts', async () => {
    // The job's first read, its project's read and the languages read.
    const text = await subscribeOverSse('subscription { jobStatusUpdated(projectId: "1", jobId: "1001") { project { languages { name } } } }');
    expect(text).toContain('"estimated":3');
    expect(strict.calls()).toHaveLength(0);
  });

  it("counts a subscription's first reads: a pipeline's pages of jobs, a job and its log, and the lookup of a project named by path", async () => {
    strict.resetCalls();
    expect(await subscribeOverSse('subscription { jobStatusUpdated(projectId: "1", pipelineId: "501") { restId } }')).toContain('"estimated":10');
    expect(await subscribeOverSse('subscription { jobLogAppended(projectId: "1", jobId: "1001") { offset } }')).toContain('"estimated":2');
    expect(await subscribeOverSse('subscription { pipelineStatusUpdated(projectId: "demo/playground") { restId } }')).toContain('"estimated":2');
    expect(await subscribeOverSse('subscription { projectImportStatusUpdated(projectId: "gid://duograph/Project/1") { importStatus } }')).not.toContain(
      'estimated',
    );
    // Only the last one, estimated at one call, ran.
    expect(strict.calls().map((call) => call.path)).toEqual(['/api/v4/projects/1']);
  });

  it('applies MAX_DEPTH, MAX_COST, MAX_ALIASES and FIELD_SUGGESTIONS', async () => {
    expect((await strict.gql(nested(3))).errors?.[0]?.message).toMatch(/depth limit of 4/);
    expect((await strict.gql(`{ project(id: "1") { languages { name } } }`)).errors?.[0]?.extensions?.cost).toEqual({ estimated: 2, limit: 1 });
    expect((await strict.gql(`{ a: project(id: "1") { id } b: project(id: "2") { id } }`)).errors?.[0]?.message).toMatch(/Aliases limit of 1/);
    expect((await strict.gql(`{ projectz { id } }`)).errors?.[0]?.message).toMatch(/Did you mean "project"/);
  });
});

describe('MAX_COST_IN_FLIGHT admits queries by their estimated upstream calls', () => {
  let budgeted: TestApp;

  beforeAll(async () => {
    // Each listing below is estimated at 6 calls (1 page of projects + 5 pages of jobs): two do not fit in 10.
    budgeted = await createTestApp({ env: { MAX_COST_IN_FLIGHT: '10' }, sandbox: { latencyMs: 30 } });
  });

  afterAll(async () => {
    await budgeted.close();
  });

  afterEach(() => {
    budgeted.resetCalls();
  });

  const listing = (jobs: number) => `{ projects(first: 5) { nodes { id jobs(first: ${jobs}) { nodes { id } } } } }`;
  /** The sandbox's calls in order: `projects`, or `jobs<per_page>`. */
  const sequence = () => budgeted.calls().map((c) => (c.path.endsWith('/jobs') ? `jobs${c.query.per_page?.[0]}` : c.path.replace(/^\/api\/v4\//, '')));
  const waiting = async () => {
    const text = await (await fetch(new URL('/metrics', budgeted.url))).text();
    return Number(/^duograph_graphql_operations_waiting (\d+)$/m.exec(text)?.[1]);
  };
  /** Waits for what the test is about to see; no deadline (the test's timeout is the backstop). */
  async function until(check: () => Promise<boolean>) {
    while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  /** Holds every job page until the returned function lets them go: a listing that started cannot finish meanwhile. */
  function holdJobPages(): () => void {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    budgeted.sandbox.addFault({ path: /\/jobs$/, until: held, serve: true });
    return () => {
      budgeted.sandbox.clearFaults();
      release();
    };
  }

  it('runs the second query only once the first is done, and both answer in full', async () => {
    const [a, b] = await Promise.all([budgeted.gql(listing(1)), budgeted.gql(listing(2))]);
    expect(a.errors).toBeUndefined();
    expect(b.errors).toBeUndefined();
    const seq = sequence();
    const pages = seq.filter((s) => s === 'jobs1').length;
    expect(pages).toBe(5);
    const first = seq[1] === 'jobs1' ? 'jobs1' : 'jobs2';
    const second = first === 'jobs1' ? 'jobs2' : 'jobs1';
    // Without the budget the second page of projects goes out before the first query's job pages.
    expect(seq).toEqual(['projects', ...Array(pages).fill(first), 'projects', ...Array(pages).fill(second)]);
  });

  it('answers an operation that calls no upstream while others wait', async () => {
    const release = holdJobPages();
    const running = [budgeted.gql(listing(1)), budgeted.gql(listing(2))];
    await until(async () => (await waiting()) === 1);
    const typename = await budgeted.gql('{ __typename }');
    expect(typename.data).toEqual({ __typename: 'Query' });
    expect(await waiting()).toBe(1);
    release();
    for (const result of await Promise.all(running)) expect(result.errors).toBeUndefined();
  });

  it('holds the budget until the last part of a deferred result', async () => {
    // The deferred part makes two rounds of calls after the first part is sent: job pages, then traces.
    const deferred = fetch(budgeted.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', 'private-token': 'demo-token' },
      body: JSON.stringify({ query: '{ project(fullPath: "platform/core") { id ... @defer { jobs(first: 3) { nodes { id trace } } } } }' }),
    }).then((response) => response.text());
    await until(async () => budgeted.calls().length > 0);
    const [text, next] = await Promise.all([deferred, budgeted.gql(listing(2))]);
    expect(next.errors).toBeUndefined();
    expect(text).toContain('"hasNext":false');
    const seq = sequence();
    const traces = seq.flatMap((s, i) => (s.endsWith('/trace') ? [i] : []));
    expect(traces.length).toBeGreaterThan(0);
    // The second query's first call comes after the deferred part's last.
    expect(seq.lastIndexOf('projects')).toBeGreaterThan(Math.max(...traces));
    expect(seq.slice(seq.lastIndexOf('projects') + 1)).toEqual(Array(5).fill('jobs2'));
  });

  it('drops a waiting query whose client went away: it makes no call and holds no part of the budget', async () => {
    const release = holdJobPages();
    const running = budgeted.gql(listing(1));
    const controller = new AbortController();
    const gone = fetch(budgeted.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'private-token': 'demo-token' },
      body: JSON.stringify({ query: listing(2) }),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    await until(async () => (await waiting()) === 1);
    expect(await waiting()).toBe(1);
    controller.abort();
    expect(await gone).toMatchObject({ name: 'AbortError' });
    await until(async () => (await waiting()) === 0);
    expect(await waiting()).toBe(0);
    release();
    expect((await running).errors).toBeUndefined();
    // A query as large as the whole budget still runs: nothing was left held.
    const next = await budgeted.gql(`{ projects(first: 9) { nodes { id jobs(first: 3) { nodes { id } } } } }`);
    expect(next.errors).toBeUndefined();
    expect(sequence().filter((s) => s === 'jobs2')).toEqual([]);
  });
});

describe('every refusal has the right status and a code', () => {
  const aliases = Array.from({ length: 31 }, (_, i) => `a${i}: project(id: "1") { name }`).join(' ');
  const directives = `{ project(id: "1") { ${Array.from({ length: 21 }, (_, i) => `n${i}: name @include(if: true)`).join(' ')} } }`;
  it.each([
    ['depth', nested(20), { name: 'depth', max: 15, found: 22 }, 'Query depth limit of 15 exceeded, found 22.'],
    ['aliases', `{ ${aliases} }`, { name: 'aliases', max: 30, found: 31 }, 'Aliases limit of 30 exceeded, found 31.'],
    ['directives', directives, { name: 'directives', max: 20, found: 21 }, 'Directives limit of 20 exceeded, found 21.'],
    ['tokens', `{ project(id: "1") { ${'name '.repeat(2_100)}} }`, { name: 'tokens', max: 2000 }, 'Token limit of 2000 exceeded.'],
  ])('refuses %s with 400 and OPERATION_LIMIT, naming the limit and what it found', async (_name, query, limit, message) => {
    const res = await post(JSON.stringify({ query }), { accept: 'application/graphql-response+json' });
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0]).toMatchObject({ message, extensions: { code: 'OPERATION_LIMIT', limit } });
    expectNoUpstreamCall();
  });

  it("keeps graphql-js's first 100 errors of a document with more, and says which limit stopped validation", async () => {
    // 150 unknown fields, no alias or directive: only graphql-js's own limit of errors stops it.
    const query = `{ ${Array.from({ length: 150 }, (_, i) => `nope${i}`).join(' ')} }`;
    const res = await post(JSON.stringify({ query }), { accept: 'application/graphql-response+json' });
    expect(res.status).toBe(400);
    const errors = res.body.errors ?? [];
    expect(errors).toHaveLength(101);
    expect(errors[0]?.message).toMatch(/^Cannot query field "nope0" on type "Query"/);
    expect(errors[100]).toMatchObject({
      message: 'Validation stopped after 100 errors (the most reported for one document); the errors above are the first ones, fix them and send again.',
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit: { name: 'validationErrors', max: 100 } },
    });
    expectNoUpstreamCall();
  });

  it.each([
    ['a value of the wrong type', { n: 'abc' }, /^Variable "\$n" got invalid value "abc"; Int cannot represent non-integer value: "abc"$/],
    ['a missing required variable', {}, /^Variable "\$n" of required type "Int!" was not provided\.$/],
  ])('answers variables that do not fit with 400 and BAD_USER_INPUT, before execution: %s', async (_name, variables, message) => {
    const query = 'query ($n: Int!) { projects(first: $n) { nodes { name } } }';
    const res = await post(JSON.stringify({ query, variables }), { accept: 'application/graphql-response+json' });
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0]?.message).toMatch(message);
    expect(res.body.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT' });
    expectNoUpstreamCall();
  });
});
