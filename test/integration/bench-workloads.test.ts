/**
 * The benchmark's workloads (bench/workloads/*.graphql) cost exactly the
 * upstream calls their header names as the REST API's minimum, and the plain
 * REST client the benchmark compares against makes those very calls and
 * builds the very same data, as does the hand-made Yoga reference on the
 * workloads it knows. Call counts only: the benchmark reports time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSWERS } from '../../bench/plain/answers.js';
import { createRestClient, type RestClient } from '../../bench/plain/rest.js';
import { YOGA_OPERATIONS, yogaReference } from '../../bench/plain/yoga.js';
import { BENCH_GITLAB_OPTIONS, BENCH_HUBZILLA_OPTIONS } from '../../bench/sandbox-options.js';
import { gatewayCredentials, loadWorkloads, MAX_CLIENTS, type Workload } from '../../bench/workloads.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const workloads = await loadWorkloads();
let t: TestApp;
let rest: RestClient;

beforeAll(async () => {
  // Calls are counted here, not timed: scale-1000's 1,000 pages may take long on a busy machine.
  t = await createTestApp({ sandbox: BENCH_GITLAB_OPTIONS, hubzillaSandbox: BENCH_HUBZILLA_OPTIONS, env: { UPSTREAM_TIMEOUT_MS: '120000' } });
  rest = createRestClient({ gitlabUrl: t.sandbox.url, hubzillaUrl: t.hubzilla.url, connections: 8, timeoutMs: 120_000 });
});

afterAll(async () => {
  await rest.close();
  await t.close();
});

function resetCalls(): void {
  t.resetCalls();
  t.resetHubzillaCalls();
}

/** Upstream calls since the last reset, as comparable strings, sorted (concurrent calls arrive in any order). */
function callsSince(): { gitlab: string[]; hubzilla: string[] } {
  const show = (c: { method: string; path: string; query: Record<string, string[]> }) =>
    `${c.method} ${c.path} ${JSON.stringify(Object.fromEntries(Object.entries(c.query).sort(([a], [b]) => a.localeCompare(b))))}`;
  return { gitlab: t.calls().map(show).sort(), hubzilla: t.hubzillaCalls().map(show).sort() };
}

function plainCredentials(workload: Workload): Record<string, string> {
  const headers = gatewayCredentials(workload);
  const hubzilla = headers['x-hubzilla-authorization'];
  return hubzilla ? { authorization: hubzilla } : headers;
}

describe('bench workloads', () => {
  it('finds every workload the issue lists', () => {
    expect(workloads.map((w) => w.name)).toEqual([
      'channel-stream',
      'file-listing',
      'forks-shared-parents',
      'project-detail',
      'projects-jobs-100x20',
      'scale-0010',
      'scale-0100',
      'scale-1000',
    ]);
  });

  it.each(workloads.map((w) => [w.name, w] as const))(
    "answers %s with exactly its minimum of upstream calls, the plain client's calls",
    async (_name, workload) => {
      resetCalls();
      const gateway = await t.gql(workload.query, undefined, { token: null, headers: gatewayCredentials(workload) });
      expect(gateway.errors).toBeUndefined();
      const gatewayCalls = callsSince();
      expect(gatewayCalls[workload.upstream]).toHaveLength(workload.minimumCalls);
      expect(gatewayCalls[workload.upstream === 'gitlab' ? 'hubzilla' : 'gitlab']).toEqual([]);

      resetCalls();
      const answer = ANSWERS[workload.operationName];
      if (!answer) throw new Error(`no plain answer for ${workload.operationName}`);
      const plain = await answer(rest.withCredentials(plainCredentials(workload)));
      expect(callsSince()).toEqual(gatewayCalls);
      expect(plain).toEqual(gateway.data);
      // The bench's last client, with a token of its own, reads what the first does.
      const last = await t.gql(workload.query, undefined, { token: null, headers: gatewayCredentials(workload, MAX_CLIENTS - 1) });
      expect(last.data).toEqual(gateway.data);

      if (!YOGA_OPERATIONS.has(workload.operationName)) return;
      resetCalls();
      const yoga = yogaReference(rest);
      const response = await yoga.fetch('http://reference/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...gatewayCredentials(workload) },
        body: JSON.stringify({ query: workload.query }),
      });
      const reference = (await response.json()) as { data?: unknown; errors?: unknown };
      expect(reference.errors).toBeUndefined();
      expect(callsSince()).toEqual(gatewayCalls);
      expect(reference.data).toEqual(gateway.data);
    },
    120_000,
  );
});
