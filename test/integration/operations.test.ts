/**
 * The documented operations (test/operations: the README's examples and the
 * GraphiQL page's) run against the sandboxes through their codegen typed
 * documents, so their results are typed by the schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  ChannelStreamDocument,
  CreateBillingProjectDocument,
  ProjectByPathDocument,
  ProjectsDocument,
  ProjectWithForksDocument,
  RegisterJobStatusWebhookDocument,
} from '../operations/generated/graphql.js';

const HUBZILLA = { 'x-hubzilla-authorization': `Basic ${Buffer.from('demo:demo-pass').toString('base64')}` };

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('the documented operations', () => {
  it('runs the README example query as the README shows it: the project, one page of forks, the languages', async () => {
    t.resetCalls();
    const { data, errors } = await t.run(ProjectWithForksDocument);
    expect(errors).toBeUndefined();
    const project = data?.project;
    expect(project?.name).toBe('Core');
    expect(project?.visibility).toBe('PUBLIC');
    expect(project?.forks?.totalCount).toBe(19);
    expect(project?.forks?.edges.map((e) => e.node.pathWithNamespace)).toEqual(['demo-group/core-fork-20', 'root/core-fork-19']);
    expect(project?.forks?.edges.every((e) => e.node.forkedFrom?.name === 'Core')).toBe(true);
    expect(project?.languages?.map((l) => l.name)).toContain('Ruby');
    expect(t.calls().map((c) => c.path)).toEqual(['/api/v4/projects/platform%2Fcore', '/api/v4/projects/1/forks', '/api/v4/projects/1/languages']);
  });

  it('runs the GraphiQL example query', async () => {
    const { data, errors } = await t.run(ProjectsDocument);
    expect(errors).toBeUndefined();
    expect(data?.projects?.nodes).toHaveLength(5);
    expect(data?.projects?.pageInfo.hasNextPage).toBe(true);
  });

  it('runs a lookup with variables, null for what the caller cannot see', async () => {
    expect((await t.run(ProjectByPathDocument, { fullPath: 'demo/playground' })).data?.project?.id).toBe('gid://duograph/Project/7');
    expect((await t.run(ProjectByPathDocument, { fullPath: 'alice/secret-notes' })).data).toEqual({ project: null });
  });

  it('runs the README example mutations', async () => {
    const created = await t.run(CreateBillingProjectDocument);
    expect(created.data?.projectCreate?.errors).toEqual([]);
    expect(created.data?.projectCreate?.project?.pathWithNamespace).toBe('demo/billing');
    const registered = await t.run(RegisterJobStatusWebhookDocument);
    expect(registered.data?.jobStatusWebhookRegister?.errors).toEqual([]);
    expect(registered.data?.jobStatusWebhookRegister?.hook?.url).toMatch(/\/webhooks\/gitlab$/);
  });

  it('runs a Hubzilla stream query', async () => {
    const { data, errors } = await t.run(ChannelStreamDocument, { first: 2 }, { headers: HUBZILLA });
    expect(errors).toBeUndefined();
    expect(data?.channel?.nickname).toBe('demo');
    expect(data?.channel?.stream?.nodes.length).toBeGreaterThan(0);
  });
});
