/**
 * Pipelines over real HTTP against the sandbox: Project.pipelines with every
 * filter GitLab offers, Project.pipeline, Pipeline as a node (Job.pipeline
 * is the same node), its full fields, variables, test report, commit and
 * bridges, and the four mutations with GitLab's role rules and errors.
 * Upstream calls are counted exactly.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

// biome-ignore lint/suspicious/noExplicitAny: results are read by path, as a client reads JSON.
type Data = any;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ sandbox: { clock: 'manual' } });
});
afterAll(async () => {
  await t.close();
});
beforeEach(() => t.resetCalls());

/** The GitLab calls since the last reset, as `path?query`. */
function calls(): string[] {
  return t.calls().map((c) => {
    const query = new URLSearchParams(Object.entries(c.query).flatMap(([k, vs]) => vs.map((v) => [k, v]))).toString();
    return `${c.method} ${c.path}${query ? `?${query}` : ''}`;
  });
}

const gid = (projectId: number, pipelineId: number) => `gid://duograph/Pipeline/${projectId}/${pipelineId}`;

async function pipelinesOf(args: string, token = 'demo-token'): Promise<Data> {
  const r = await t.gql<Data>(`{ project(id: 1) { pipelines(${args}) { totalCount nodes { id restId ref status source } } } }`, {}, { token });
  expect(r.errors).toBeUndefined();
  return r.data.project.pipelines;
}

describe('Project.pipelines', () => {
  it('lists pipelines newest first, as global ids carrying the project', async () => {
    const page = await pipelinesOf('first: 3');
    const ids = page.nodes.map((n: Data) => n.restId);
    expect([...ids].sort((a: number, b: number) => b - a)).toEqual(ids);
    expect(page.nodes[0].id).toBe(gid(1, ids[0]));
    expect(page.totalCount).toBeGreaterThanOrEqual(4);
    expect(calls()).toEqual(['GET /api/v4/projects/1', 'GET /api/v4/projects/1/pipelines?page=1&per_page=3']);
  });

  it('passes every filter in GitLab’s names and values', async () => {
    await pipelinesOf(
      'first: 5, scope: FINISHED, status: SUCCESS, source: PUSH, ref: "main", sha: "abc", yamlErrors: false, username: "alice", name: "n", ' +
        'updatedAfter: "2024-01-01T00:00:00Z", updatedBefore: "2030-01-01T00:00:00Z", createdAfter: "2024-01-01T00:00:00Z", createdBefore: "2030-01-01T00:00:00Z", orderBy: UPDATED_AT, sort: ASC',
    );
    const query = t.calls().at(-1)?.query ?? {};
    expect(Object.fromEntries(Object.entries(query).map(([k, v]) => [k, v[0]]))).toEqual({
      scope: 'finished',
      status: 'success',
      source: 'push',
      ref: 'main',
      sha: 'abc',
      yaml_errors: 'false',
      username: 'alice',
      name: 'n',
      updated_after: '2024-01-01T00:00:00.000Z',
      updated_before: '2030-01-01T00:00:00.000Z',
      created_after: '2024-01-01T00:00:00.000Z',
      created_before: '2030-01-01T00:00:00.000Z',
      order_by: 'updated_at',
      sort: 'asc',
      page: '1',
      per_page: '5',
    });
  });

  it('filters as GitLab does: by ref, status, scope, tags, user and order', async () => {
    expect((await pipelinesOf('ref: "v1.2.0"')).nodes.map((n: Data) => n.restId)).toEqual([102]);
    const failed = await pipelinesOf('status: FAILED');
    expect(failed.nodes.every((n: Data) => n.status === 'FAILED')).toBe(true);
    expect(failed.nodes.map((n: Data) => n.restId)).toContain(103);
    expect((await pipelinesOf('scope: TAGS')).nodes.map((n: Data) => n.ref)).toEqual(['v1.2.0']);
    // The latest pipeline of each branch: one per ref, tags left out.
    const branches = (await pipelinesOf('scope: BRANCHES')).nodes.map((n: Data) => n.ref);
    expect(branches).toContain('main');
    expect(new Set(branches).size).toBe(branches.length);
    expect(branches).not.toContain('v1.2.0');
    expect((await pipelinesOf('username: "nobody-at-all"')).nodes).toEqual([]);
    const ascending = (await pipelinesOf('orderBy: ID, sort: ASC, first: 2')).nodes.map((n: Data) => n.restId);
    expect(ascending).toEqual([101, 102]);
  });

  it('refuses what GitLab would refuse before any call: a bad date fails validation', async () => {
    const r = await t.gql(`{ project(id: 1) { pipelines(updatedAfter: "yesterday") { nodes { restId } } } }`);
    expect(r.status).toBe(400);
    expect(r.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(calls()).toEqual([]);
  });

  it('is FORBIDDEN for a user who cannot read the project’s pipelines', async () => {
    // bob is a Reporter of demo-group/api (6)... but no one but members reads private pipelines: carol is nobody there.
    const r = await t.gql(`{ project(id: 8) { pipelines { nodes { restId } } } }`, {}, { token: 'bob-token' });
    expect(r.data).toEqual({ project: null });
  });
});

describe('one pipeline', () => {
  const FULL = `id restId iid projectId ref sha status source webUrl createdAt updatedAt name beforeSha tag yamlErrors
    user { username } startedAt finishedAt committedAt duration queuedDuration coverage detailedStatus { group text icon detailsPath }`;

  it('reads one pipeline in full in one call, and null for an unknown one', async () => {
    const r = await t.gql<Data>(`{ project(id: 1) { pipeline(id: 101) { ${FULL} } none: pipeline(id: 999999) { restId } } }`);
    expect(r.errors).toBeUndefined();
    const p = r.data.project.pipeline;
    expect(p).toMatchObject({
      id: gid(1, 101),
      restId: 101,
      iid: 1,
      ref: 'main',
      status: 'SUCCESS',
      tag: false,
      yamlErrors: null,
      user: { username: 'alice' },
    });
    expect(p.detailedStatus.group).toBe('success');
    expect(p.duration).toBeGreaterThan(0);
    expect(r.data.project.none).toBeNull();
    expect(calls().sort()).toEqual(['GET /api/v4/projects/1', 'GET /api/v4/projects/1/pipelines/101', 'GET /api/v4/projects/1/pipelines/999999']);
  });

  it('is a node: node(id:) and Job.pipeline are the same pipeline, and a basic one reads the rest once', async () => {
    const r = await t.gql<Data>(
      `{ node(id: "${gid(1, 101)}") { ... on Pipeline { restId status } } project(id: 1) { job(id: 1002) { pipeline { id restId beforeSha tag user { username } } } } }`,
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.node).toEqual({ restId: 101, status: 'SUCCESS' });
    expect(r.data.project.job.pipeline).toMatchObject({ id: gid(1, 101), restId: 101, tag: false, user: { username: 'alice' } });
    // node(id:) and the job's basic pipeline share one full read.
    expect(calls().filter((c) => c.includes('/pipelines/101')).length).toBe(1);
  });

  it('reads its jobs, variables, test report summary, commit and bridges', async () => {
    const r = await t.gql<Data>(`{ project(id: 1) { pipeline(id: 104) {
      jobs(first: 10) { nodes { name } }
      testReportSummary { count success failed suites { name count jobRestIds } }
      commit { sha title }
      bridges { totalCount nodes { restId } }
    } } }`);
    expect(r.errors).toBeUndefined();
    const p = r.data.project.pipeline;
    expect(p.jobs.nodes.map((j: Data) => j.name)).toContain('rspec');
    expect(p.testReportSummary.suites.map((s: Data) => s.name)).toEqual(['build']);
    expect(p.testReportSummary.count).toBe(p.testReportSummary.suites[0].count);
    expect(p.commit.title).toBe('Fix the flaky importer spec');
    expect(p.bridges).toEqual({ totalCount: 0, nodes: [] });
  });

  it('lists trigger jobs at trigger_jobs where GitLab has it (19.2+), else at bridges after one 404, and remembers which', async () => {
    const bridges = '{ project(id: 1) { pipeline(id: 104) { bridges { totalCount nodes { restId } } } } }';
    const routes = (app: TestApp) => app.calls().flatMap((c) => /\/(bridges|trigger_jobs)$/.exec(c.path)?.[1] ?? []);
    // GitLab before 19.2 (the sandbox's default): trigger_jobs is a route it does not have, answered by its router's 404.
    const older = await createTestApp({ sandbox: { clock: 'manual' } });
    const current = await createTestApp({ sandbox: { clock: 'manual', triggerJobs: true } });
    try {
      for (const app of [older, current]) {
        for (let i = 0; i < 2; i++) {
          const r = await app.gql<Data>(bridges);
          expect(r.errors).toBeUndefined();
          expect(r.data.project.pipeline.bridges).toEqual({ totalCount: 0, nodes: [] });
        }
      }
      expect(routes(older)).toEqual(['trigger_jobs', 'bridges', 'bridges']);
      expect(routes(current)).toEqual(['trigger_jobs', 'trigger_jobs']);
    } finally {
      await Promise.all([older.close(), current.close()]);
    }
  });
});

const CREATE = `mutation ($input: PipelineCreateInput!) { pipelineCreate(input: $input) {
  pipeline { id restId ref status source user { username } variables { key value variableType } jobs { nodes { name status } } }
  errors { message field code } } }`;

describe('mutations', () => {
  it('creates a pipeline with variables; its first stage is queued at once', async () => {
    const r = await t.gql<Data>(CREATE, {
      input: {
        projectId: '7',
        ref: 'main',
        variables: [
          { key: 'DEPLOY', value: 'yes ✓' },
          { key: 'CONF', value: 'a=1', variableType: 'file' },
        ],
      },
    });
    expect(r.errors).toBeUndefined();
    const { pipeline, errors } = r.data.pipelineCreate;
    expect(errors).toEqual([]);
    expect(pipeline).toMatchObject({ ref: 'main', source: 'api', user: { username: 'demo' } });
    expect(pipeline.variables).toEqual([
      { key: 'DEPLOY', value: 'yes ✓', variableType: 'env_var' },
      { key: 'CONF', value: 'a=1', variableType: 'file' },
    ]);
    expect(pipeline.jobs.nodes).toEqual([
      { name: 'build', status: 'PENDING' },
      { name: 'test', status: 'CREATED' },
    ]);
    const sent = t.calls().find((c) => c.method === 'POST');
    expect(sent?.path).toBe('/api/v4/projects/7/pipeline');
  });

  it('takes the project by full path too', async () => {
    const r = await t.gql<Data>(CREATE, { input: { projectId: 'demo/playground', ref: 'main' } });
    expect(r.data.pipelineCreate.errors).toEqual([]);
    expect(r.data.pipelineCreate.pipeline.id).toMatch(/^gid:\/\/duograph\/Pipeline\/7\/\d+$/);
  });

  it('answers an unknown ref as a user error on input.ref, and a Guest as FORBIDDEN', async () => {
    const r = await t.gql<Data>(CREATE, { input: { projectId: '7', ref: 'no-such-branch' } });
    expect(r.data.pipelineCreate).toEqual({ pipeline: null, errors: [{ message: 'Reference not found', field: ['input', 'ref'], code: 'INVALID' }] });
    // demo is a Guest of platform (project 2).
    const guest = await t.gql<Data>(CREATE, { input: { projectId: 'gid://duograph/Project/2', ref: 'main' } });
    expect(guest.data.pipelineCreate.errors.map((e: Data) => e.code)).toEqual(['FORBIDDEN']);
    const bad = await t.gql<Data>(CREATE, { input: { projectId: '7', ref: 'main', variables: [{ key: 'NO SPACES', value: 'x' }] } });
    expect(bad.data.pipelineCreate.errors[0].field).toEqual(['input', 'variables']);
  });

  it('reads the name GitLab leaves out of the create, retry and cancel answers, with one call each', async () => {
    // Entities::Ci::Pipeline, what those actions answer with, has no `name`; GET /pipelines/:id (PipelineWithMetadata) has it.
    const direct = await fetch(`${t.sandbox.url}/api/v4/projects/7/pipelines`, { headers: { 'private-token': 'demo-token' } });
    const some = ((await direct.json()) as { id: number }[])[0];
    const whole = await (await fetch(`${t.sandbox.url}/api/v4/projects/7/pipelines/${some?.id}`, { headers: { 'private-token': 'demo-token' } })).json();
    t.sandbox.addFault({ method: 'GET', path: /\/projects\/7\/pipelines\/\d+$/, status: 200, body: JSON.stringify({ ...whole, name: 'Nightly ✓' }) });
    t.resetCalls();
    const created = await t.gql<Data>('mutation { pipelineCreate(input: { projectId: "7", ref: "main" }) { pipeline { name } errors { message } } }');
    const posted = t.calls().find((c) => c.method === 'POST');
    expect(posted?.path).toBe('/api/v4/projects/7/pipeline');
    expect(created.data.pipelineCreate).toEqual({ pipeline: { name: 'Nightly ✓' }, errors: [] });
    expect(t.calls({ method: 'GET', path: /\/pipelines\/\d+$/ })).toHaveLength(1);
    t.sandbox.clearFaults();
  });

  it('puts a base error that is not about the ref on no field', async () => {
    t.sandbox.addFault({
      method: 'POST',
      path: '/api/v4/projects/7/pipeline',
      status: 400,
      body: JSON.stringify({ message: { base: ['Insufficient permissions to set pipeline variables'] } }),
      times: 1,
    });
    const r = await t.gql<Data>(CREATE, { input: { projectId: '7', ref: 'main', variables: [{ key: 'A', value: 'b' }] } });
    expect(r.data.pipelineCreate).toEqual({
      pipeline: null,
      errors: [{ message: 'Insufficient permissions to set pipeline variables', field: [], code: 'INVALID' }],
    });
  });

  it('cancels a running pipeline and retries its canceled jobs', async () => {
    const created = await t.gql<Data>(CREATE, { input: { projectId: '7', ref: 'main' } });
    const id = created.data.pipelineCreate.pipeline.id;
    const cancel = await t.gql<Data>(
      'mutation ($id: ID!) { pipelineCancel(input: { id: $id }) { pipeline { id status jobs { nodes { status } } } errors { message } } }',
      { id },
    );
    expect(cancel.data.pipelineCancel.errors).toEqual([]);
    expect(cancel.data.pipelineCancel.pipeline.status).toBe('CANCELED');
    const retry = await t.gql<Data>('mutation ($id: ID!) { pipelineRetry(input: { id: $id }) { pipeline { status } errors { message } } }', { id });
    expect(retry.data.pipelineRetry.errors).toEqual([]);
    expect(['PENDING', 'RUNNING', 'CREATED']).toContain(retry.data.pipelineRetry.pipeline.status);
    // alice can see the public project's pipelines but has no role in it.
    const notMine = await t.gql<Data>(
      'mutation ($id: ID!) { pipelineCancel(input: { id: $id }) { pipeline { status } errors { code } } }',
      { id },
      { token: 'alice-token' },
    );
    expect(notMine.data.pipelineCancel).toEqual({ pipeline: null, errors: [{ code: 'FORBIDDEN' }] });
  });

  it('deletes a pipeline as Owner only', async () => {
    const created = await t.gql<Data>(CREATE, { input: { projectId: '7', ref: 'main' } });
    const id = created.data.pipelineCreate.pipeline.id;
    const DELETE = 'mutation ($id: ID!) { pipelineDelete(input: { id: $id }) { pipeline { id } errors { code } } }';
    // bob is a Developer of demo/playground: not enough to delete.
    const asBob = await t.gql<Data>(DELETE, { id }, { token: 'bob-token' });
    expect(asBob.data.pipelineDelete).toEqual({ pipeline: null, errors: [{ code: 'FORBIDDEN' }] });
    const asOwner = await t.gql<Data>(DELETE, { id });
    expect(asOwner.data.pipelineDelete).toEqual({ pipeline: null, errors: [] });
    const gone = await t.gql<Data>(`{ node(id: "${id}") { id } }`);
    expect(gone.data.node).toBeNull();
  });

  it('refuses an id that is not a pipeline before any call', async () => {
    const r = await t.gql<Data>('mutation { pipelineRetry(input: { id: "gid://duograph/Job/1/1001" }) { pipeline { id } } }');
    expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(calls()).toEqual([]);
  });
});
