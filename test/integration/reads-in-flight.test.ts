/**
 * Reads in flight with the answer cache off (CACHE_MAX_AGE_MS=0, the test
 * app's default), over real HTTP against the sandbox: nothing is stored, a
 * body is decoded as it arrives, and a GET on its way is still shared by
 * the requests of one scope that read it alike (src/upstreams/http.ts,
 * AnswerCache.readDecoded). The sandbox holds an answer until the test lets
 * it go, so "in flight at once" is decided by the test, not by timing.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { counter } from '../helpers/metrics.js';
import { expectOneCallPerScope, expectSharedFailureOnce, expectSharedReadOutlivesALeaver, gate } from '../helpers/shared-reads.js';

const CORE = '{ project(fullPath: "platform/core") { name starCount } }';
const CORE_PATH = '/api/v4/projects/platform%2Fcore';
const JOBS_PATH = '/api/v4/projects/7/jobs';

let t: TestApp;

const lookups = (outcome: 'miss' | 'joined', family?: string) =>
  counter(t.app, 'duograph_upstream_cache_lookups_total', { outcome, ...(family ? { family } : {}) });
const gets = (path: string) => t.calls({ method: 'GET', path }).length;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('reads in flight with the answer cache off', () => {
  it('shares one call among identical reads of one scope, none across scopes, and stores nothing', async () => {
    t.resetCalls();
    await expectOneCallPerScope(t, CORE, CORE_PATH, { project: { name: 'Core', starCount: expect.any(Number) } });
    // Nothing kept: the next read asks again.
    await t.gql(CORE);
    expect(gets(CORE_PATH)).toBe(3);
  });

  it('shares a page of jobs only among reads that keep the same fields of it', async () => {
    t.resetCalls();
    const held = gate();
    t.sandbox.addFault({ method: 'GET', path: JOBS_PATH, until: held.until, times: 2 });
    const joinedBefore = await lookups('joined', 'jobs');
    const statuses = '{ project(id: "7") { jobs(first: 5) { nodes { restId status } } } }';
    const names = '{ project(id: "7") { jobs(first: 5) { nodes { restId name } } } }';
    const pending = [t.gql(statuses), t.gql(statuses), t.gql(names)];
    // The two alike share a call; the third, which keeps other fields, has one of its own.
    await vi.waitFor(async () => {
      expect(gets(JOBS_PATH)).toBe(2);
      expect((await lookups('joined', 'jobs')) - joinedBefore).toBe(1);
    });
    held.open();
    type Jobs = { project: { jobs: { nodes: Record<string, unknown>[] } } };
    const [first, second, third] = (await Promise.all(pending)).map((answer) => answer.data as Jobs);
    expect(second).toEqual(first);
    const ids = (answer: Jobs | undefined) => answer?.project.jobs.nodes.map((job) => job.restId);
    expect(ids(first)).toHaveLength(5);
    expect(ids(third)).toEqual(ids(first));
    expect(third?.project.jobs.nodes.every((job) => typeof job.name === 'string')).toBe(true);
    expect(gets(JOBS_PATH)).toBe(2);
  });

  it('hands an upstream failure of a shared read to every waiter once, with its code', async () => {
    await expectSharedFailureOnce(t, CORE, CORE_PATH, { project: { name: 'Core', starCount: expect.any(Number) } });
  });

  it('cancels a shared read only when every waiter has gone', async () => {
    await expectSharedReadOutlivesALeaver(t, CORE, CORE_PATH, { project: { name: 'Core', starCount: expect.any(Number) } });
  });
});
