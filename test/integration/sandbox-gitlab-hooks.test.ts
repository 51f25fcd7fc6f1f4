/**
 * The sandbox GitLab's project webhooks and push rules over real HTTP, and
 * webhook delivery to a local receiver: the real headers, the job and
 * pipeline payloads, X-Gitlab-Token only when a secret is set, and the
 * secret never in any hook response.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { STEP_MS, startGitlabSandbox, type GitlabSandbox } from '../../src/sandbox/gitlab/server.js';
import { deadPort } from '../helpers/dead-port.js';

type Json = Record<string, unknown>;

interface Reply {
  status: number;
  body: unknown;
  text: string;
}

let sandbox: GitlabSandbox;

beforeAll(async () => {
  sandbox = await startGitlabSandbox({ clock: 'manual' });
});

afterAll(async () => {
  await sandbox.close();
});

async function call(method: string, path: string, token?: string, payload?: unknown, target = sandbox): Promise<Reply> {
  const headers: Record<string, string> = token ? { 'Private-Token': token } : {};
  if (payload !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${target.url}/api/v4${path}`, { method, headers, body: payload === undefined ? undefined : JSON.stringify(payload) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text), text };
}

const json = (reply: Reply): Json => reply.body as Json;

describe('project hooks', () => {
  it('lists hooks to Maintainers, paginated, never with the secret token', async () => {
    const reply = await call('GET', '/projects/1/hooks', 'bob-token');
    expect(reply.status).toBe(200);
    const hooks = reply.body as Json[];
    expect(hooks.map((hook) => hook.id)).toEqual([1]);
    expect(hooks[0]).toMatchObject({ url: 'https://hooks.sandbox.test/core', project_id: 1, push_events: true, job_events: false, alert_status: 'executable' });
    expect(reply.text).not.toContain('seeded-hook-secret');
    expect(hooks[0]).not.toHaveProperty('token');
  });

  it('refuses Developers (403) and anonymous callers (401), hides unknown hooks (404)', async () => {
    expect(await call('GET', '/projects/1/hooks', 'demo-token')).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect((await call('GET', '/projects/1/hooks')).status).toBe(401);
    expect(await call('GET', '/projects/1/hooks/2', 'bob-token')).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect((await call('GET', '/projects/10/hooks', 'bob-token')).status).toBe(404);
  });

  it("matches GitLab's project_hook.json", async () => {
    const schemaDir = new URL('../fixtures/gitlab-schemas/public_api/v4/', import.meta.url);
    type AjvClass = typeof AjvModule.default;
    const Ajv = ((AjvModule as unknown as { default?: AjvClass }).default ?? AjvModule) as AjvClass;
    type AddFormats = typeof addFormatsModule.default;
    const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as AddFormats;
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const schema = JSON.parse(readFileSync(fileURLToPath(new URL('project_hook.json', schemaDir)), 'utf8')) as Json;
    // The stored schema predates milestone_events, which lib/api/entities/project_hook.rb exposes since GitLab 17.
    const validate = ajv.compile({ ...schema, properties: { ...(schema.properties as Json), milestone_events: { type: 'boolean' } } });
    for (const [project, token] of [
      [1, 'bob-token'],
      [7, 'demo-token'],
    ] as const) {
      for (const hook of (await call('GET', `/projects/${project}/hooks`, token)).body as Json[]) {
        expect(validate(hook) ? [] : validate.errors).toEqual([]);
      }
    }
  });

  it('adds a hook (201) with GitLab defaults and wiki_page_events, keeping the token to itself', async () => {
    const reply = await call('POST', '/projects/7/hooks', 'demo-token', {
      url: 'https://example.test/hook',
      token: 'sekrit',
      wiki_page_events: true,
      issues_events: 'true',
    });
    expect(reply.status).toBe(201);
    expect(json(reply)).toMatchObject({
      url: 'https://example.test/hook',
      project_id: 7,
      push_events: true,
      wiki_page_events: true,
      issues_events: true,
      job_events: false,
      enable_ssl_verification: true,
    });
    expect(reply.text).not.toContain('sekrit');
    expect((await call('GET', `/projects/7/hooks/${json(reply).id as number}`, 'demo-token')).text).not.toContain('sekrit');
  });

  it('needs a url, and a valid one', async () => {
    expect(await call('POST', '/projects/7/hooks', 'demo-token', { push_events: true })).toMatchObject({ status: 400, body: { error: 'url is missing' } });
    expect(await call('POST', '/projects/7/hooks', 'demo-token', { url: 'not a url' })).toMatchObject({ status: 422, body: { error: 'Invalid url given' } });
    expect(await call('POST', '/projects/7/hooks', 'demo-token', { url: 'https://x.test', job_events: 'perhaps' })).toMatchObject({
      status: 400,
      body: { error: 'job_events is invalid' },
    });
  });

  it("edits with either wiki_events (the spec's edit name) or wiki_page_events, url optional", async () => {
    const id = json(await call('POST', '/projects/7/hooks', 'demo-token', { url: 'https://example.test/edit' })).id as number;
    expect(json(await call('PUT', `/projects/7/hooks/${id}`, 'demo-token', { wiki_events: true }))).toMatchObject({
      wiki_page_events: true,
      url: 'https://example.test/edit',
    });
    expect(json(await call('PUT', `/projects/7/hooks/${id}`, 'demo-token', { wiki_page_events: false, push_events: false }))).toMatchObject({
      wiki_page_events: false,
      push_events: false,
    });
    expect((await call('PUT', '/projects/7/hooks/999', 'demo-token', { push_events: true })).status).toBe(404);
    expect((await call('PUT', `/projects/7/hooks/${id}`, 'bob-token', { push_events: true })).status).toBe(403);
  });

  it('deletes idempotently as the spec says: the removed hook, then an empty 204', async () => {
    const id = json(await call('POST', '/projects/7/hooks', 'demo-token', { url: 'https://example.test/gone', token: 'gone-secret' })).id as number;
    const removed = await call('DELETE', `/projects/7/hooks/${id}`, 'demo-token');
    expect(removed.status).toBe(200);
    expect(json(removed)).toMatchObject({ id, url: 'https://example.test/gone' });
    expect(removed.text).not.toContain('gone-secret');
    expect(await call('DELETE', `/projects/7/hooks/${id}`, 'demo-token')).toMatchObject({ status: 204, text: '' });
  });

  it("deletes as current GitLab does with hookDelete 'gitlab': 204, then 404", async () => {
    const current = await startGitlabSandbox({ clock: 'manual', hookDelete: 'gitlab' });
    try {
      expect(await call('DELETE', '/projects/7/hooks/2', 'demo-token', undefined, current)).toMatchObject({ status: 204, text: '' });
      expect(await call('DELETE', '/projects/7/hooks/2', 'demo-token', undefined, current)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    } finally {
      await current.close();
    }
  });
});

describe('push rules', () => {
  it('reads the rule in its current shape, and null for a project without one', async () => {
    expect(json(await call('GET', '/projects/1/push_rule', 'bob-token'))).toEqual({
      id: 1,
      project_id: 1,
      commit_message_regex: 'Fixes \\d+\\..*',
      commit_message_negative_regex: 'ssh\\:\\/\\/',
      branch_name_regex: '',
      deny_delete_tag: false,
      created_at: '2024-01-20T12:00:00.000Z',
      member_check: false,
      prevent_secrets: true,
      author_email_regex: '@sandbox\\.test$',
      file_name_regex: '',
      max_file_size: 5,
      commit_committer_check: false,
      commit_committer_name_check: false,
      reject_unsigned_commits: false,
      reject_non_dco_commits: false,
    });
    expect(await call('GET', '/projects/7/push_rule', 'demo-token')).toMatchObject({ status: 200, text: 'null' });
  });

  it('adds (201), refuses a second (422), edits (200), deletes (204) and then 404s', async () => {
    const added = await call('POST', '/projects/7/push_rule', 'demo-token', { deny_delete_tag: true, max_file_size: 10 });
    expect(added.status).toBe(201);
    expect(json(added)).toMatchObject({ project_id: 7, deny_delete_tag: true, max_file_size: 10, commit_message_regex: '' });
    expect(await call('POST', '/projects/7/push_rule', 'demo-token', { member_check: true })).toMatchObject({
      status: 422,
      body: { message: 'Project push rule exists' },
    });
    expect(json(await call('PUT', '/projects/7/push_rule', 'demo-token', { commit_message_regex: '^JIRA-' }))).toMatchObject({
      commit_message_regex: '^JIRA-',
      deny_delete_tag: true,
    });
    expect((await call('DELETE', '/projects/7/push_rule', 'demo-token')).status).toBe(204);
    expect(await call('DELETE', '/projects/7/push_rule', 'demo-token')).toMatchObject({ status: 404, body: { message: '404 Push Rule Not Found' } });
    expect(await call('PUT', '/projects/7/push_rule', 'demo-token', { member_check: true })).toMatchObject({
      status: 404,
      body: { message: '404 Push Rule Not Found' },
    });
  });

  it('validates parameters and regular expressions, and needs a Maintainer', async () => {
    const missing = await call('POST', '/projects/5/push_rule', 'demo-token', {});
    expect(missing.status).toBe(400);
    expect(json(missing).error).toMatch(/^deny_delete_tag, member_check, .* are missing, at least one parameter must be provided$/);
    const regex = await call('POST', '/projects/5/push_rule', 'demo-token', { branch_name_regex: '([a-z' });
    expect(regex.status).toBe(400);
    expect(Object.keys(json(regex).message as Json)).toEqual(['branch_name_regex']);
    expect((await call('GET', '/projects/1/push_rule', 'demo-token')).status).toBe(403);
    expect((await call('GET', '/projects/1/push_rule')).status).toBe(401);
  });
});

describe('webhook delivery', () => {
  interface Received {
    headers: IncomingHttpHeaders;
    body: Json;
  }

  let receiver: Server;
  let receiverUrl: string;
  const received: Received[] = [];
  let delivering: GitlabSandbox;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json });
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    delivering = await startGitlabSandbox({ clock: 'manual' });
  });

  afterAll(async () => {
    await delivering.close();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  beforeEach(() => {
    received.length = 0;
    delivering.deliveries.length = 0;
  });

  it('posts Job Hook and Pipeline Hook payloads with the real headers as the clock moves jobs', async () => {
    const hook = await call(
      'POST',
      '/projects/1/hooks',
      'bob-token',
      { url: `${receiverUrl}/secret`, token: 'receiver-secret', job_events: true, pipeline_events: true, push_events: false },
      delivering,
    );
    expect(hook.status).toBe(201);
    await call('POST', '/projects/1/hooks', 'bob-token', { url: `${receiverUrl}/open`, job_events: true }, delivering);
    delivering.advance(STEP_MS);
    await delivering.flushDeliveries();

    const jobEvents = received.filter((r) => r.headers['x-gitlab-event'] === 'Job Hook');
    expect(jobEvents.length).toBeGreaterThan(0);
    const first = received[0];
    expect(first?.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': expect.stringMatching(/^GitLab\/\d+\.\d+\.\d+/) as string,
      'x-gitlab-instance': 'http://gitlab.sandbox.test',
    });
    for (const name of ['x-gitlab-webhook-uuid', 'x-gitlab-event-uuid', 'idempotency-key']) {
      expect(first?.headers[name]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
    // The token goes only to the hook that has one.
    const secretHeaders = delivering.deliveries.filter((d) => d.url.endsWith('/secret')).map((d) => d.headers['X-Gitlab-Token']);
    const openHeaders = delivering.deliveries.filter((d) => d.url.endsWith('/open')).map((d) => d.headers['X-Gitlab-Token']);
    expect(secretHeaders.length).toBeGreaterThan(0);
    expect(secretHeaders.every((token) => token === 'receiver-secret')).toBe(true);
    expect(openHeaders.length).toBeGreaterThan(0);
    expect(openHeaders.every((token) => token === undefined)).toBe(true);
    expect(received.filter((r) => r.headers['x-gitlab-token'] !== undefined).every((r) => r.headers['x-gitlab-token'] === 'receiver-secret')).toBe(true);
    // The job payload: object_kind build, the job that finished.
    const rspec = jobEvents.map((r) => r.body).find((body) => body.build_id === 1013 && body.build_status === 'success');
    expect(rspec).toMatchObject({
      object_kind: 'build',
      ref: 'main',
      tag: false,
      build_name: 'rspec',
      build_stage: 'test',
      pipeline_id: 104,
      project_id: 1,
      project_name: 'Platform / Core',
      build_failure_reason: null,
      commit: { id: 104, status: 'running' },
      project: { id: 1, path_with_namespace: 'platform/core', visibility_level: 20 },
      repository: { name: 'Core', homepage: 'http://gitlab.sandbox.test/platform/core' },
      user: { id: 3, name: 'Alice Liddell' },
    });
    expect(typeof rspec?.build_duration).toBe('number');
    // Every delivery is recorded with the receiver's answer.
    expect(delivering.deliveries.every((d) => d.status === 200 && d.error === undefined)).toBe(true);
    const deliveredBodies = delivering.deliveries.map((d) => JSON.parse(d.body) as Json);
    expect(deliveredBodies.map((b) => b.object_kind).sort()).toEqual(received.map((r) => r.body.object_kind).sort());
  });

  it('posts a Pipeline Hook when the pipeline changes status, with its builds', async () => {
    delivering.advance(3 * STEP_MS);
    await delivering.flushDeliveries();
    const pipelineEvents = received.filter((r) => r.headers['x-gitlab-event'] === 'Pipeline Hook');
    expect(pipelineEvents.every((r) => r.body.object_kind === 'pipeline')).toBe(true);
    const pipelineEvent = pipelineEvents.find((r) => (r.body.object_attributes as Json).id === 104);
    expect(pipelineEvent?.body).toMatchObject({
      object_kind: 'pipeline',
      object_attributes: {
        id: 104,
        iid: 4,
        ref: 'main',
        status: 'success',
        stages: ['build', 'test', 'deploy'],
        url: 'http://gitlab.sandbox.test/platform/core/-/pipelines/104',
      },
      project: { id: 1 },
      merge_request: null,
    });
    const attributes = pipelineEvent?.body.object_attributes as Json;
    expect(attributes.created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
    expect((pipelineEvent?.body.builds as Json[] | undefined)?.map((b) => b.id)).toEqual([1012, 1013, 1014, 1015, 1016]);
    expect(received.filter((r) => r.headers['x-gitlab-event'] === 'Pipeline Hook').every((r) => r.headers['x-gitlab-token'] === 'receiver-secret')).toBe(true);
  });

  it('fires Job Hooks for API actions too, shares the event UUID across hooks and changes the webhook UUID', async () => {
    expect((await call('POST', '/projects/1/jobs/1010/retry', 'demo-token', undefined, delivering)).status).toBe(201);
    await delivering.flushDeliveries();
    const pending = delivering.deliveries.filter((d) => (JSON.parse(d.body) as Json).build_status === 'pending');
    expect(pending).toHaveLength(2);
    expect(pending[0]?.headers['X-Gitlab-Event-UUID']).toBe(pending[1]?.headers['X-Gitlab-Event-UUID']);
    expect(pending[0]?.headers['X-Gitlab-Webhook-UUID']).not.toBe(pending[1]?.headers['X-Gitlab-Webhook-UUID']);
  });

  it('drops the secret when the URL changes without a new token, as GitLab does', async () => {
    const hooks = (await call('GET', '/projects/1/hooks', 'bob-token', undefined, delivering)).body as Json[];
    const secret = hooks.find((hook) => (hook.url as string).endsWith('/secret'));
    await call('PUT', `/projects/1/hooks/${secret?.id as number}`, 'bob-token', { url: `${receiverUrl}/moved` }, delivering);
    await call('POST', '/projects/1/jobs/1002/retry', 'demo-token', undefined, delivering);
    await delivering.flushDeliveries();
    const moved = delivering.deliveries.filter((d) => d.url.endsWith('/moved'));
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.every((d) => d.headers['X-Gitlab-Token'] === undefined)).toBe(true);
  });

  it('records a failed delivery without disturbing the sandbox', async () => {
    const port = await deadPort();
    await call('POST', '/projects/7/hooks', 'demo-token', { url: `http://127.0.0.1:${port}/refused`, job_events: true }, delivering);
    expect((await call('POST', '/projects/7/jobs/2001/retry', 'demo-token', undefined, delivering)).status).toBe(201);
    await delivering.flushDeliveries();
    const failed = delivering.deliveries.filter((d) => d.url.endsWith('/refused'));
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]?.status).toBeUndefined();
    expect(failed[0]?.error).toMatch(/ECONNREFUSED/);
    expect((await call('GET', '/projects/7', 'demo-token', undefined, delivering)).status).toBe(200);
  });
});
