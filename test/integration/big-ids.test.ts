/**
 * GitLab ids past 2^31, as every job of gitlab.com has had since 2022, through
 * every path of the gateway: lists, lookups, global ids, mutations,
 * subscriptions, federation entities and downloads. The sandbox seeds
 * root/admin-scripts as project 4000000013 with pipeline 4100000001 and jobs
 * 4294967296 and 4294967297, and hands out every later job id past them.
 */
import { createClient as createSseClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

const PROJECT = 4_000_000_013;
const PIPELINE = 4_100_000_001;
const JOBS = [4_294_967_297, 4_294_967_296];
const ROOT = { token: 'admin-token' };
const jobGid = (id: number) => `gid://duograph/Job/${PROJECT}/${id}`;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ sandbox: { clock: 'manual' } });
});
afterAll(async () => {
  await t.close();
});

describe('ids past 2^31', () => {
  it('arrive exact in every id field of a project, its jobs, pipeline, users and namespace', async () => {
    const res = await t.gql<Record<string, unknown>>(
      `{ project(id: "${PROJECT}") {
          id restId creatorId namespace { restId } owner { restId }
          jobs { nodes { id restId user { restId } pipeline { restId projectId } } }
          pipelineJobs(pipelineId: ${PIPELINE}) { nodes { restId } }
          job(id: "${JOBS[0]}") { restId artifactsArchiveUrl }
        }
        byPath: project(fullPath: "root/admin-scripts") { restId } }`,
      {},
      ROOT,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({
      project: {
        id: `gid://duograph/Project/${PROJECT}`,
        restId: PROJECT,
        creatorId: 1,
        namespace: { restId: 1 },
        owner: { restId: 1 },
        jobs: { nodes: JOBS.map((id) => ({ id: jobGid(id), restId: id, user: { restId: 1 }, pipeline: { restId: PIPELINE, projectId: PROJECT } })) },
        pipelineJobs: { nodes: [...JOBS].reverse().map((id) => ({ restId: id })) },
        job: { restId: JOBS[0], artifactsArchiveUrl: expect.stringContaining(`/downloads/gitlab/projects/${PROJECT}/jobs/${JOBS[0]}/artifacts`) },
      },
      byPath: { restId: PROJECT },
    });
    expect(t.calls({ path: `/api/v4/projects/${PROJECT}/pipelines/${PIPELINE}/jobs` })).toHaveLength(1);
  });

  it('go through node, nodes and federation entities by global id', async () => {
    const res = await t.gql<Record<string, unknown>>(
      `query ($r: [_Any!]!) {
        node(id: "${jobGid(JOBS[1] ?? 0)}") { ... on Job { restId } }
        nodes(ids: ["gid://duograph/Project/${PROJECT}", "${jobGid(JOBS[0] ?? 0)}"]) { ... on Project { restId } ... on Job { restId } }
        _entities(representations: $r) { ... on Job { restId pipeline { restId } } }
      }`,
      { r: [{ __typename: 'Job', id: jobGid(JOBS[0] ?? 0) }] },
      ROOT,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({
      node: { restId: JOBS[1] },
      nodes: [{ restId: PROJECT }, { restId: JOBS[0] }],
      _entities: [{ restId: JOBS[0], pipeline: { restId: PIPELINE } }],
    });
  });

  it('go through a mutation, whose new job id is past 2^32 too', async () => {
    const res = await t.gql<{ jobRetry: { job: { id: string; restId: number } | null; errors: unknown[] } }>(
      'mutation ($id: ID!) { jobRetry(input: { id: $id }) { job { id restId } errors { message } } }',
      { id: jobGid(JOBS[1] ?? 0) },
      ROOT,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.jobRetry.errors).toEqual([]);
    const retried = res.data?.jobRetry.job?.restId ?? 0;
    expect(retried).toBeGreaterThan(JOBS[0] ?? 0);
    expect(res.data?.jobRetry.job?.id).toBe(jobGid(retried));
    expect(t.calls({ method: 'POST' }).at(-1)?.path).toBe(`/api/v4/projects/${PROJECT}/jobs/${JOBS[1]}/retry`);
  });

  it('go through a subscription, by numeric id and by full path', async () => {
    const client = createSseClient({ url: t.url.href, headers: { 'private-token': 'admin-token' }, retryAttempts: 0, singleConnection: false });
    for (const projectId of [String(PROJECT), 'root/admin-scripts']) {
      const stream = client.iterate({
        query: 'subscription ($projectId: ID!, $jobId: ID) { jobStatusUpdated(projectId: $projectId, jobId: $jobId) { id restId pipeline { restId } } }',
        variables: { projectId, jobId: String(JOBS[0]) },
      });
      const first = await stream.next();
      expect(first.value).toEqual({ data: { jobStatusUpdated: { id: jobGid(JOBS[0] ?? 0), restId: JOBS[0], pipeline: { restId: PIPELINE } } } });
      await stream.return?.();
    }
    client.dispose();
  });

  it('go through the download route', async () => {
    const res = await t.gql<{ project: { job: { artifactsArchiveUrl: string } } }>(
      `{ project(id: "${PROJECT}") { job(id: "${JOBS[0]}") { artifactsArchiveUrl } } }`,
      {},
      ROOT,
    );
    const download = await fetch(new URL(res.data?.project.job.artifactsArchiveUrl ?? '', t.url), { headers: { 'private-token': 'admin-token' } });
    expect(download.status).toBe(200);
    expect((await download.arrayBuffer()).byteLength).toBeGreaterThan(0);
    expect(t.calls({ path: `/api/v4/projects/${PROJECT}/jobs/${JOBS[0]}/artifacts` })).toHaveLength(1);
  });

  it('refuse an id JavaScript cannot hold exactly (past 2^53-1) before any call', async () => {
    t.resetCalls();
    const lookup = await t.gql(`{ project(id: "9007199254740993") { restId } }`, {}, ROOT);
    expect(lookup.errors?.[0]).toMatchObject({
      message: '"9007199254740993" is not a project id, full path or Project global id.',
      extensions: { code: 'BAD_USER_INPUT' },
    });
    const argument = await t.gql(`{ project(id: "${PROJECT}") { pipelineJobs(pipelineId: 9007199254740993) { nodes { restId } } } }`, {}, ROOT);
    expect(argument.status).toBe(400);
    expect(argument.errors?.[0]?.message).toMatch(/SafeInt cannot represent unsafe integer value: 9007199254740993/);
    expect(t.calls()).toEqual([]);
  });
});
