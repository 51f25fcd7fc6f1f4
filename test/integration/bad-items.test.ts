/**
 * One bad upstream item costs one field, on both executors: the compiled one
 * (graphql-jit, every query without @defer) and graphql-js (with @defer).
 * Sibling fields keep the data their calls brought, the error is
 * UPSTREAM_ERROR where the bad value was, and no malformed item becomes a
 * node with an id of `.../undefined`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

interface Outcome {
  status: number;
  data: unknown;
  errors: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
}

let t: TestApp;
let jobs: Record<string, unknown>[];
let core: Record<string, unknown>;

beforeAll(async () => {
  t = await createTestApp();
  const read = async (path: string) => (await fetch(`${t.sandbox.url}/api/v4${path}`, { headers: { 'private-token': 'demo-token' } })).json();
  jobs = (await read('/projects/7/jobs')) as Record<string, unknown>[];
  core = (await read('/projects/1')) as Record<string, unknown>;
});
afterAll(async () => {
  await t.close();
});

/** Runs `query` as it is (graphql-jit) or with a deferred fragment (graphql-js), and gives the initial part's data and errors. */
async function run(query: string, deferred: boolean): Promise<Outcome> {
  const text = deferred ? query.replace(/ }$/, ' ... @defer { other: project(id: "5") { name } } }') : query;
  const response = await fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'private-token': 'demo-token', accept: deferred ? 'multipart/mixed' : 'application/json' },
    body: JSON.stringify({ query: text }),
  });
  const body = await response.text();
  const first = deferred ? (body.split(/\r?\n---/).find((part) => part.includes('{')) ?? '') : body;
  const parsed = JSON.parse(first.slice(first.indexOf('{'))) as { data?: unknown; errors?: Outcome['errors'] };
  for (const error of parsed.errors ?? []) delete (error as { locations?: unknown }).locations;
  return { status: response.status, data: parsed.data, errors: parsed.errors ?? [] };
}

function answerWith(path: RegExp, body: unknown): void {
  t.sandbox.clearFaults();
  t.sandbox.addFault({ path, status: 200, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
}

describe('a bad item in an upstream list', () => {
  const JOBS = '{ core: project(id: "1") { name } p: project(id: "7") { jobs(first: 3) { nodes { id name } } } }';

  it.each([
    ['null', null],
    ['1', 1],
    ['"x"', 'x'],
    ['{}', {}],
  ])('%s among jobs fails the job list alone, the same on both executors', async (_name, bad) => {
    answerWith(/\/projects\/7\/jobs$/, [jobs[0], bad, jobs[1]]);
    for (const deferred of [false, true]) {
      const outcome = await run(JOBS, deferred);
      expect(outcome.status).toBe(200);
      expect(outcome.data).toEqual({ core: { name: 'Core' }, p: { jobs: null } });
      expect(outcome.errors).toEqual([
        expect.objectContaining({ message: 'GitLab sent item 2 of a list that is not a record with an id.', path: ['p', 'jobs'] }),
      ]);
      expect(outcome.errors[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
      expect(JSON.stringify(outcome)).not.toContain('undefined');
    }
  });

  it('is an error, not an empty page, when an object comes where a list belongs', async () => {
    answerWith(/\/projects\/7\/jobs$/, { message: 'not a list' });
    for (const deferred of [false, true]) {
      const outcome = await run(JOBS, deferred);
      expect(outcome.data).toEqual({ core: { name: 'Core' }, p: { jobs: null } });
      expect(outcome.errors.map((e) => [e.extensions?.code, e.message, e.path])).toEqual([
        ['UPSTREAM_ERROR', 'GitLab sent something other than a list where a list belongs.', ['p', 'jobs']],
      ]);
    }
  });

  it('costs one item of a list of values, with UPSTREAM_ERROR where the null was', async () => {
    answerWith(/\/projects\/1$/, { ...core, topics: [null, 'ruby'] });
    for (const deferred of [false, true]) {
      const outcome = await run('{ a: project(id: "7") { name } core: project(id: "1") { name topics } }', deferred);
      expect(outcome.status).toBe(200);
      expect(outcome.data).toEqual({ a: { name: 'Playground' }, core: { name: 'Core', topics: null } });
      expect(outcome.errors.map((e) => [e.extensions?.code, e.message, e.path])).toEqual([
        ['UPSTREAM_ERROR', 'The upstream sent no value where one is always expected.', ['core', 'topics', 0]],
      ]);
    }
  });

  it('never makes a node with an id of undefined from a record without an id', async () => {
    const { id: _id, ...withoutId } = core;
    answerWith(/\/projects\/1$/, withoutId);
    for (const deferred of [false, true]) {
      const outcome = await run('{ a: project(id: "7") { name } core: project(id: "1") { id name } }', deferred);
      expect(outcome.data).toMatchObject({ a: { name: 'Playground' } });
      expect(JSON.stringify(outcome.data)).not.toContain('undefined');
      expect(outcome.errors[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    }
  });
});
