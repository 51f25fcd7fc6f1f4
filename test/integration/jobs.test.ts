import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.js';
import { JOB_RECORD_FIELDS } from '../../src/schema/gitlab/job.js';
import { GitlabClient } from '../../src/upstreams/gitlab/client.js';
import { HttpClient } from '../../src/upstreams/http.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ sandbox: { clock: 'manual' } });
});

afterAll(async () => {
  await t.close();
});

beforeEach(() => t.resetCalls());

const gid = (projectId: number, jobId: number) => `gid://duograph/Job/${projectId}/${jobId}`;

interface JobNode {
  id: string;
  restId: number;
  name: string;
  status: string | null;
  [key: string]: unknown;
}

describe('Project.jobs and Project.job', () => {
  it('lists jobs newest first with no totalCount, since GitLab does not count job lists', async () => {
    const res = await t.gql<{ project: { jobs: { totalCount: number | null; nodes: JobNode[]; pageInfo: { hasNextPage: boolean } } } }>(
      `{ project(fullPath: "platform/core") { jobs(first: 5) { totalCount pageInfo { hasNextPage } nodes { id restId name status } } } }`,
    );
    expect(res.errors).toBeUndefined();
    const jobs = res.data?.project.jobs;
    expect(jobs?.totalCount).toBeNull();
    expect(jobs?.pageInfo.hasNextPage).toBe(true);
    const ids = jobs?.nodes.map((j) => j.restId) ?? [];
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    expect(jobs?.nodes[0]?.id).toBe(gid(1, ids[0] ?? 0));
    expect(t.calls().map((c) => `${c.path}?${new URLSearchParams(Object.entries(c.query).flatMap(([k, v]) => v.map((x) => [k, x]))).toString()}`)).toEqual([
      '/api/v4/projects/platform%2Fcore?',
      '/api/v4/projects/1/jobs?page=1&per_page=5',
    ]);
  });

  it('filters by statuses, sent as scope[]', async () => {
    const res = await t.gql<{ project: { jobs: { nodes: JobNode[] } } }>(
      `{ project(fullPath: "platform/core") { jobs(first: 50, statuses: [FAILED, MANUAL]) { nodes { restId status } } } }`,
    );
    expect(res.errors).toBeUndefined();
    const statuses = new Set(res.data?.project.jobs.nodes.map((j) => j.status));
    expect([...statuses].sort()).toEqual(['FAILED', 'MANUAL']);
    expect(t.calls().at(-1)?.query['scope[]']).toEqual(['failed', 'manual']);
  });

  it('does not offer STARTED as a filter, which GitLab 17/18 refuses as a scope, and still reads it', async () => {
    t.resetCalls();
    const res = await t.gql(`{ project(fullPath: "platform/core") { jobs(statuses: [STARTED]) { nodes { restId } } } }`);
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.message).toMatch(/Value "STARTED" does not exist in "JobScope" enum/);
    expect(t.calls()).toHaveLength(0);
    const { buildSchema } = await import('../../src/schema/index.js');
    const status = buildSchema().getType('JobStatus') as import('graphql').GraphQLEnumType;
    expect(status.getValue('STARTED')?.value).toBe('started');
  });

  it('maps the statuses of current GitLab', async () => {
    const res = await t.gql<{ project: { pipelineJobs: { nodes: JobNode[] } } }>(
      `{ project(fullPath: "platform/core") { pipelineJobs(pipelineId: 105, first: 10) { nodes { restId status } } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(new Set(res.data?.project.pipelineJobs.nodes.map((j) => j.status))).toEqual(
      new Set(['PREPARING', 'WAITING_FOR_RESOURCE', 'SCHEDULED', 'CANCELING']),
    );
    expect(t.calls().at(-1)?.path).toBe('/api/v4/projects/1/pipelines/105/jobs');
  });

  it('reads one job with its pipeline, commit, artifacts, runner and user', async () => {
    const res = await t.gql<{ project: { job: Record<string, unknown> } }>(`{
      project(fullPath: "platform/core") {
        job(id: "1001") {
          id restId name stage ref status tag allowFailure coverage createdAt startedAt finishedAt erasedAt duration
          queuedDuration webUrl failureReason tagList archived artifactsExpireAt
          artifacts { fileType size filename fileFormat }
          runner { restId description isShared runnerType }
          commit { sha shortId title message authorName authorEmail createdAt }
          pipeline { restId projectId ref sha status }
          user { username name }
          project { pathWithNamespace }
          traceUrl artifactsArchiveUrl artifactFileUrl(path: "dist/app.js")
        }
      }
    }`);
    expect(res.errors).toBeUndefined();
    const job = res.data?.project.job ?? {};
    expect(job).toMatchObject({
      id: gid(1, 1001),
      name: 'build',
      status: 'SUCCESS',
      pipeline: { restId: 101, projectId: 1, status: expect.any(String) },
      project: { pathWithNamespace: 'platform/core' },
    });
    expect((job.artifacts as unknown[]).length).toBeGreaterThan(0);
    expect(job.traceUrl).toBe('/downloads/gitlab/projects/1/jobs/1001/trace');
    expect(job.artifactFileUrl).toBe('/downloads/gitlab/projects/1/jobs/1001/artifacts/dist/app.js');
    // The project and the job; Job.project reuses the project already loaded.
    expect(t.calls()).toHaveLength(2);
  });

  it('finds a job by global id through node, and null for a missing one', async () => {
    const res = await t.gql<{ node: JobNode | null; project: { job: JobNode | null } }>(
      `{ node(id: "${gid(1, 1002)}") { ... on Job { name status } } project(fullPath: "platform/core") { job(id: "999999") { name } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.node).toEqual({ name: 'rspec', status: 'SUCCESS' });
    expect(res.data?.project.job).toBeNull();
  });

  it('returns the tail of a job log as text', async () => {
    const res = await t.gql<{ project: { job: { trace: string; full: string } } }>(
      `{ project(fullPath: "platform/core") { job(id: "1002") { trace(tailLines: 2) full: trace } } }`,
    );
    expect(res.errors).toBeUndefined();
    const { trace, full } = res.data?.project.job ?? { trace: '', full: '' };
    expect(full.split('\n').length).toBeGreaterThan(2);
    expect(trace.split('\n')).toHaveLength(2);
    expect(full.trimEnd().endsWith(trace)).toBe(true);
  });

  it("gives null for the log of a job that never ran, as GitLab's empty 200 means", async () => {
    const direct = await fetch(`${t.sandbox.url}/api/v4/projects/1/jobs/1015/trace`, { headers: { 'private-token': 'demo-token' } });
    expect([direct.status, await direct.text()]).toEqual([200, '']);
    const res = await t.gql<{ project: { job: { status: string; trace: string | null; tail: string | null } } }>(
      `{ project(fullPath: "platform/core") { job(id: "1015") { status trace tail: trace(tailLines: 5) } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.project.job).toEqual({ status: 'CREATED', trace: null, tail: null });
  });
});

describe('job lists cut to what the selection reads', () => {
  /** The gateway's HTTP client on the sandbox, without retries, for calls made directly. */
  const directHttp = () =>
    new HttpClient({
      name: 'gitlab',
      baseUrl: new URL('/api/v4', t.sandbox.url),
      timeoutMs: 5_000,
      connections: 1,
      maxResponseBytes: 1 << 22,
      policy: { retries: 0 },
    });
  const LIGHT = 'id restId name stage status createdAt finishedAt pipeline { restId ref status }';
  const HEAVY = `${LIGHT} ref tag allowFailure duration webUrl tagList commit { sha title message } user { username } runner { restId } artifacts { fileType size }`;

  it('keeps only the named fields of each record, its id and its project, as the page is parsed', async () => {
    const client = new GitlabClient(directHttp(), { 'private-token': 'demo-token' });
    const whole = await client.listJobs(1, undefined, { page: 1, perPage: 5 });
    const cut = await client.listJobs(1, undefined, { page: 1, perPage: 5 }, undefined, ['name', 'pipeline']);
    expect(Object.keys(whole.items[0] ?? {}).length).toBeGreaterThan(15);
    expect(cut.items.map((job) => Object.keys(job).sort())).toEqual(cut.items.map(() => ['id', 'name', 'pipeline', 'project_id']));
    expect(cut.items).toEqual(whole.items.map((job) => ({ id: job.id, name: job.name, pipeline: job.pipeline, project_id: 1 })));
    // An error body is not a list: it reaches the error mapping whole.
    await expect(client.listJobs(999_999, undefined, { page: 1, perPage: 5 }, undefined, ['name'])).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('fails the call, not the process, when a select throws', async () => {
    const http = directHttp();
    const select = () => {
      throw new Error('no such field');
    };
    await expect(http.json({ method: 'GET', path: ['projects', 1, 'jobs'], headers: { 'private-token': 'demo-token' }, select })).rejects.toBeInstanceOf(
      UpstreamError,
    );
    // The body reader is left clean: the next call on the same connection answers.
    expect(
      (await http.json<unknown[]>({ method: 'GET', path: ['projects', 1, 'jobs'], headers: { 'private-token': 'demo-token' } })).body.length,
    ).toBeGreaterThan(0);
  });

  it('answers a light selection exactly as the same fields of a full one, with the same single call', async () => {
    const query = (fields: string) => `{ project(fullPath: "platform/core") { jobs(first: 30) { nodes { ${fields} } edges { cursor node { restId } } } } }`;
    const light = await t.gql<{ project: { jobs: { nodes: JobNode[] } } }>(query(LIGHT));
    const lightCalls = t.calls().length;
    t.resetCalls();
    const heavy = await t.gql<{ project: { jobs: { nodes: JobNode[] } } }>(query(HEAVY));
    expect(light.errors).toBeUndefined();
    expect(heavy.errors).toBeUndefined();
    expect(lightCalls).toBe(2);
    expect(t.calls()).toHaveLength(2);
    const pick = (node: JobNode) => Object.fromEntries(Object.keys(light.data?.project.jobs.nodes[0] ?? {}).map((key) => [key, node[key]]));
    expect(light.data?.project.jobs.nodes).toEqual(heavy.data?.project.jobs.nodes.map(pick));
    expect(heavy.data?.project.jobs.nodes.some((job) => (job.commit as { message?: string } | null)?.message)).toBe(true);
  });

  it('still answers every field of a listed job looked up again, at the cost of its own call', async () => {
    const first = await t.gql<{ project: { jobs: { nodes: JobNode[] } } }>(`{ project(fullPath: "platform/core") { jobs(first: 1) { nodes { restId } } } }`);
    const id = first.data?.project.jobs.nodes[0]?.restId;
    t.resetCalls();
    const res = await t.gql<{ project: { jobs: { nodes: JobNode[] }; job: JobNode | null } }>(
      `{ project(fullPath: "platform/core") { jobs(first: 5) { nodes { restId name } } job(id: "${id}") { restId name ref commit { sha } } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.project.jobs.nodes[0]).toEqual({ restId: id, name: res.data?.project.job?.name });
    expect(res.data?.project.job?.ref).toEqual(expect.any(String));
    expect(res.data?.project.job?.commit).toEqual({ sha: expect.stringMatching(/^[0-9a-f]{40}$/) });
    expect(
      t
        .calls()
        .map((c) => c.path)
        .sort(),
    ).toEqual(['/api/v4/projects/1/jobs', `/api/v4/projects/1/jobs/${id}`, '/api/v4/projects/platform%2Fcore']);
  });

  it('knows the record fields of every Job field, so no selection keeps whole records', async () => {
    const { buildSchema } = await import('../../src/schema/index.js');
    const job = buildSchema().getType('Job') as import('graphql').GraphQLObjectType;
    expect(Object.keys(job.getFields()).filter((name) => !(name in JOB_RECORD_FIELDS))).toEqual([]);
  });
});

describe('job mutations', () => {
  const action = async (name: string, jobId: number, token = 'demo-token') =>
    t.gql<Record<string, { job: JobNode | null; errors: { code: string; message: string }[] }>>(
      `mutation($id: ID!) { ${name}(input: { id: $id }) { job { id restId status startedAt finishedAt duration erasedAt artifacts { fileType } } errors { code message field } } }`,
      { id: gid(1, jobId) },
      { token },
    );

  it('cancels a running job', async () => {
    const res = await action('jobCancel', 1013);
    expect(res.data?.jobCancel).toMatchObject({ job: { restId: 1013, status: 'CANCELED' }, errors: [] });
    expect(t.calls().at(-1)).toMatchObject({ method: 'POST', path: '/api/v4/projects/1/jobs/1013/cancel' });
  });

  it('retries a job, answering with the new job', async () => {
    const res = await action('jobRetry', 1010);
    const job = res.data?.jobRetry?.job;
    expect(res.data?.jobRetry?.errors).toEqual([]);
    expect(job?.restId).not.toBe(1010);
    expect(job).toMatchObject({ status: 'PENDING', startedAt: null, finishedAt: null, duration: null });
  });

  it('plays a manual job', async () => {
    const res = await action('jobPlay', 1005);
    expect(res.data?.jobPlay).toMatchObject({ job: { restId: 1005, status: 'PENDING', startedAt: null }, errors: [] });
  });

  it('keeps artifacts, and refuses an erase or artifact delete to a Developer', async () => {
    const keep = await action('jobArtifactsKeep', 1001);
    expect(keep.data?.jobArtifactsKeep?.errors).toEqual([]);
    const erase = await action('jobErase', 1009);
    expect(erase.data?.jobErase?.job).toBeNull();
    expect(erase.data?.jobErase?.errors[0]?.code).toBe('FORBIDDEN');
    const del = await action('jobArtifactsDelete', 1009);
    expect(del.data?.jobArtifactsDelete?.errors[0]?.code).toBe('FORBIDDEN');
  });

  it('erases a job and deletes artifacts as a Maintainer', async () => {
    const erase = await action('jobErase', 1003, 'alice-token');
    expect(erase.data?.jobErase?.errors).toEqual([]);
    expect(erase.data?.jobErase?.job?.erasedAt).toEqual(expect.any(String));
    const del = await action('jobArtifactsDelete', 1009, 'alice-token');
    expect(del.data?.jobArtifactsDelete?.errors).toEqual([]);
    expect(t.calls().some((c) => c.method === 'DELETE' && c.path === '/api/v4/projects/1/jobs/1009/artifacts')).toBe(true);
  });

  it('refuses an id that is not a job id before calling GitLab', async () => {
    const res = await t.gql(`mutation { jobCancel(input: { id: "gid://duograph/Project/1" }) { errors { code } } }`);
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(t.calls()).toHaveLength(0);
  });

  it('reports a missing job as NOT_FOUND', async () => {
    const res = await action('jobCancel', 987654);
    expect(res.data?.jobCancel).toBeNull();
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', upstream: { status: 404, method: 'POST' } });
  });
});

describe('hooks', () => {
  const HOOK =
    'hook { id restId projectId url name pushEvents jobEvents pipelineEvents wikiPageEvents enableSslVerification pushEventsBranchFilter createdAt }';

  it('lists hooks for a maintainer and never shows a token', async () => {
    const res = await t.gql<{ project: { hooks: { nodes: { url: string }[] } } }>(
      `{ project(fullPath: "platform/core") { hooks(first: 10) { totalCount nodes { id url pushEvents tagPushEvents } } } }`,
      {},
      { token: 'alice-token' },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.project.hooks.nodes[0]?.url).toBe('https://hooks.sandbox.test/core');
    expect(JSON.stringify(res)).not.toContain('seeded-hook-secret');
  });

  it('refuses the hook list to a Developer with FORBIDDEN', async () => {
    const res = await t.gql(`{ project(fullPath: "platform/core") { name hooks(first: 10) { nodes { url } } } }`);
    expect(res.data).toEqual({ project: { name: 'Core', hooks: null } });
    expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('creates, edits and deletes a hook, sending the token but never returning it', async () => {
    const created = await t.gql<{ projectHookCreate: { hook: { id: string; restId: number; wikiPageEvents: boolean }; errors: unknown[] } }>(
      `mutation { projectHookCreate(input: { projectId: "demo/playground", url: "https://ci.example.test/hook", token: "s3cret-hook-token", jobEvents: true, wikiPageEvents: true }) { ${HOOK} errors { code } } }`,
    );
    expect(created.data?.projectHookCreate.errors).toEqual([]);
    expect(created.data?.projectHookCreate.hook).toMatchObject({ url: 'https://ci.example.test/hook', jobEvents: true, wikiPageEvents: true });
    const createCall = t.calls({ method: 'POST', path: /\/hooks$/ }).at(-1) as unknown as { body: string };
    expect(JSON.parse(createCall.body)).toMatchObject({
      url: 'https://ci.example.test/hook',
      token: 's3cret-hook-token',
      job_events: true,
      wiki_page_events: true,
    });
    expect(JSON.stringify(created)).not.toContain('s3cret-hook-token');

    const hookId = created.data?.projectHookCreate.hook.id;
    const edited = await t.gql<{ projectHookUpdate: { hook: { wikiPageEvents: boolean; url: string }; errors: unknown[] } }>(
      `mutation($id: ID!) { projectHookUpdate(input: { id: $id, wikiPageEvents: false, pipelineEvents: true }) { ${HOOK} errors { code } } }`,
      { id: hookId },
    );
    expect(edited.data?.projectHookUpdate.errors).toEqual([]);
    expect(edited.data?.projectHookUpdate.hook).toMatchObject({ wikiPageEvents: false, url: 'https://ci.example.test/hook' });
    const editCall = t.calls({ method: 'PUT' }).at(-1) as unknown as { body: string };
    // GitLab 11 reads wiki_events on edit, current GitLab wiki_page_events: both are sent.
    expect(JSON.parse(editCall.body)).toMatchObject({ wiki_events: false, wiki_page_events: false, pipeline_events: true });

    for (let i = 0; i < 2; i++) {
      const removed = await t.gql<{ projectHookDelete: { hook: { restId: number } | null; errors: unknown[] } }>(
        `mutation($id: ID!) { projectHookDelete(input: { id: $id }) { hook { restId } errors { code } } }`,
        { id: hookId },
      );
      expect(removed.data?.projectHookDelete.errors).toEqual([]);
      expect(removed.data?.projectHookDelete.hook === null).toBe(i === 1);
    }
  });

  it('reads and writes the GitLab 17/18 toggles, the branch filter strategy, and custom headers and URL variables by key only', async () => {
    const FIELDS = `hook { emojiEvents confidentialNoteEvents deploymentEvents releasesEvents featureFlagEvents milestoneEvents
      resourceAccessTokenEvents branchFilterStrategy pushEventsBranchFilter customHeaderKeys urlVariableKeys url } errors { message }`;
    const created = await t.gql<{ projectHookCreate: { hook: Record<string, unknown> & { url: string }; errors: unknown[] } }>(
      `mutation { projectHookCreate(input: {
        projectId: "demo/playground", url: "https://ci.example.test/{room}", emojiEvents: true, milestoneEvents: true, deploymentEvents: true,
        branchFilterStrategy: REGEX, pushEventsBranchFilter: "^release/.*$",
        customHeaders: [{ key: "X-Team", value: "header-secret-1" }], urlVariables: [{ key: "room", value: "url-secret-2" }]
      }) { ${FIELDS} } }`,
    );
    expect(created.errors).toBeUndefined();
    expect(created.data?.projectHookCreate).toEqual({
      hook: {
        emojiEvents: true,
        confidentialNoteEvents: false,
        deploymentEvents: true,
        releasesEvents: false,
        featureFlagEvents: false,
        milestoneEvents: true,
        resourceAccessTokenEvents: false,
        branchFilterStrategy: 'REGEX',
        pushEventsBranchFilter: '^release/.*$',
        customHeaderKeys: ['X-Team'],
        urlVariableKeys: ['room'],
        url: 'https://ci.example.test/{room}',
      },
      errors: [],
    });
    const sent = JSON.parse((t.calls({ method: 'POST', path: /\/hooks$/ }).at(-1) as unknown as { body: string }).body) as Record<string, unknown>;
    expect(sent).toMatchObject({
      emoji_events: true,
      milestone_events: true,
      branch_filter_strategy: 'regex',
      custom_headers: [{ key: 'X-Team', value: 'header-secret-1' }],
      url_variables: [{ key: 'room', value: 'url-secret-2' }],
    });
    // The values went to GitLab and nowhere else.
    expect(JSON.stringify(created)).not.toMatch(/header-secret-1|url-secret-2/);

    const hooks = await t.gql<{ project: { hooks: { nodes: Record<string, unknown>[] } } }>(
      '{ project(fullPath: "platform/core") { hooks { nodes { restId customHeaderKeys urlVariableKeys branchFilterStrategy } } } }',
      {},
      { token: 'alice-token' },
    );
    expect(hooks.data?.project.hooks.nodes[0]).toEqual({
      restId: 1,
      customHeaderKeys: ['X-Chat-Channel'],
      urlVariableKeys: [],
      branchFilterStrategy: 'WILDCARD',
    });
    expect(JSON.stringify(hooks)).not.toContain('seeded-header-secret');
  });

  it('refuses a hook URL that is not http(s) before calling GitLab', async () => {
    const res = await t.gql<{ projectHookCreate: { errors: { field: string[]; code: string }[] } }>(
      `mutation { projectHookCreate(input: { projectId: "demo/playground", url: "ftp://x" }) { errors { field code } } }`,
    );
    expect(res.data?.projectHookCreate.errors).toEqual([{ field: ['input', 'url'], code: 'INVALID' }]);
    expect(t.calls()).toHaveLength(0);
  });
});

describe('push rules', () => {
  it('reads a push rule, and null for a project without one', async () => {
    const res = await t.gql<{ core: { pushRule: Record<string, unknown> }; play: { pushRule: null } }>(
      `{ core: project(fullPath: "platform/core") { pushRule { restId commitMessageRegex preventSecrets maxFileSize branchNameRegex } } play: project(fullPath: "platform/docs") { pushRule { restId } } }`,
      {},
      { token: 'alice-token' },
    );
    expect(res.errors).toBeUndefined();
    // A rule GitLab holds as "" stays "": it is set, and empty.
    expect(res.data?.core.pushRule).toMatchObject({ restId: 1, preventSecrets: true, maxFileSize: 5, branchNameRegex: '' });
    expect(res.data?.play.pushRule).toBeNull();
  });

  it('creates, updates and deletes a push rule', async () => {
    const create = await t.gql<{ projectPushRuleCreate: { pushRule: Record<string, unknown>; errors: unknown[] } }>(
      `mutation { projectPushRuleCreate(input: { projectId: "demo/playground", commitMessageRegex: "^JIRA-", maxFileSize: 10, denyDeleteTag: true }) { pushRule { commitMessageRegex maxFileSize denyDeleteTag } errors { code } } }`,
    );
    expect(create.data?.projectPushRuleCreate).toEqual({ pushRule: { commitMessageRegex: '^JIRA-', maxFileSize: 10, denyDeleteTag: true }, errors: [] });
    const update = await t.gql<{ projectPushRuleUpdate: { pushRule: Record<string, unknown>; errors: unknown[] } }>(
      `mutation { projectPushRuleUpdate(input: { projectId: "demo/playground", maxFileSize: 20 }) { pushRule { commitMessageRegex maxFileSize } errors { code } } }`,
    );
    expect(update.data?.projectPushRuleUpdate).toEqual({ pushRule: { commitMessageRegex: '^JIRA-', maxFileSize: 20 }, errors: [] });
    const del = await t.gql<{ projectPushRuleDelete: { errors: unknown[] } }>(
      `mutation { projectPushRuleDelete(input: { projectId: "demo/playground" }) { pushRule { restId } errors { code } } }`,
    );
    expect(del.data?.projectPushRuleDelete).toEqual({ pushRule: null, errors: [] });
    // Current GitLab answers a second delete with 404 "Push Rule Not Found" (the spec calls it idempotent).
    const again = await t.gql(`mutation { projectPushRuleDelete(input: { projectId: "demo/playground" }) { errors { code } } }`);
    expect(again.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', upstream: { status: 404, method: 'DELETE' } });
  });
});
