/**
 * The schema's manners towards clients: values GitLab adds later read as a
 * documented fallback with the raw value beside them, the pipeline source
 * filter knows GitLab's newer sources, and a subscription takes a job's or
 * pipeline's global id alone, as mutations do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { sseSubscribe } from '../helpers/subscriptions.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
});
afterAll(async () => {
  await t.close();
});

describe('values GitLab adds later', () => {
  it('reads a job or pipeline status the schema does not know as UNKNOWN, with the raw status beside it', async () => {
    const jobs = (await (await fetch(`${t.sandbox.url}/api/v4/projects/7/jobs`, { headers: { 'private-token': 'demo-token' } })).json()) as Record<
      string,
      unknown
    >[];
    t.sandbox.addFault({ path: /\/projects\/7\/jobs$/, status: 200, body: JSON.stringify([{ ...jobs[0], status: 'awaiting_quantum' }, jobs[1]]), times: 1 });
    const res = await t.gql<{ project: { jobs: { nodes: { status: string; statusRaw: string }[] } } }>(
      '{ project(id: "7") { jobs(first: 2) { nodes { status statusRaw } } } }',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.project.jobs.nodes[0]).toEqual({ status: 'UNKNOWN', statusRaw: 'awaiting_quantum' });
    expect(res.data?.project.jobs.nodes[1]?.status).toBe(String(jobs[1]?.status).toUpperCase());
  });

  it.each([
    ['DUO_WORKFLOW', 'duo_workflow'],
    ['PIPELINE_EXECUTION_POLICY_SCHEDULE', 'pipeline_execution_policy_schedule'],
    ['UNKNOWN', 'unknown'],
  ])('filters pipelines by source %s', async (source, sent) => {
    t.resetCalls();
    const res = await t.gql(`{ project(id: "7") { pipelines(source: ${source}) { nodes { id } } } }`);
    expect(res.errors).toBeUndefined();
    expect(t.calls({ path: '/api/v4/projects/7/pipelines' })[0]?.query.source).toEqual([sent]);
  });
});

describe('scalar literals', () => {
  it('reads a DateTime written in the document as it reads one in a variable, on the compiled executor', async () => {
    t.resetCalls();
    const literal = await t.gql('{ project(id: "7") { pipelines(updatedAfter: "2024-01-01T00:00:00+02:00") { nodes { id } } } }');
    const variable = await t.gql('query($at: DateTime) { project(id: "7") { pipelines(updatedAfter: $at) { nodes { id } } } }', {
      at: '2024-01-01T00:00:00+02:00',
    });
    expect(literal.errors).toBeUndefined();
    expect(variable.errors).toBeUndefined();
    const sent = t.calls({ path: '/api/v4/projects/7/pipelines' }).map((c) => c.query.updated_after);
    expect(sent).toEqual([['2023-12-31T22:00:00.000Z'], ['2023-12-31T22:00:00.000Z']]);
    const bad = await t.gql('{ project(id: "7") { pipelines(updatedAfter: "not a time") { nodes { id } } } }');
    expect(bad.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });
});

describe('subscriptions by global id alone', () => {
  it("follows a job's log from its global id, without projectId", async () => {
    const sub = sseSubscribe(t, 'subscription { jobLogAppended(jobId: "gid://duograph/Job/1/1013") { jobRestId offset } }');
    const first = await sub.next();
    expect(first.errors).toBeUndefined();
    expect(first.data?.jobLogAppended).toEqual({ jobRestId: 1013, offset: 0 });
    await sub.stop();
  });

  it("watches a pipeline from its global id, and a job list from a pipeline's", async () => {
    const pipelines = (await (await fetch(`${t.sandbox.url}/api/v4/projects/1/pipelines`, { headers: { 'private-token': 'demo-token' } })).json()) as {
      id: number;
    }[];
    const id = `gid://duograph/Pipeline/1/${pipelines[0]?.id}`;
    const pipeline = sseSubscribe(t, `subscription { pipelineStatusUpdated(pipelineId: "${id}") { restId projectId } }`);
    expect((await pipeline.next()).data?.pipelineStatusUpdated).toEqual({ restId: pipelines[0]?.id, projectId: 1 });
    await pipeline.stop();
    const jobs = sseSubscribe(t, `subscription { jobStatusUpdated(pipelineId: "${id}") { project { restId } } }`);
    expect((await jobs.next()).data?.jobStatusUpdated).toEqual({ project: { restId: 1 } });
    await jobs.stop();
  });

  it('says what is missing when neither projectId nor a global id names the project', async () => {
    const sub = sseSubscribe(t, 'subscription { jobLogAppended(jobId: "1013") { offset } }');
    const refused = await sub.next();
    expect(refused.errors?.[0]).toMatchObject({
      message: 'projectId is required unless jobId is a global id, which names its project.',
      extensions: { code: 'BAD_USER_INPUT' },
    });
  });
});
