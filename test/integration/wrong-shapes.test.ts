/**
 * Values of the wrong type from GitLab never become silent data: each fails
 * its own field with UPSTREAM_ERROR, the message never repeats the value, and
 * the rest of the record still arrives. An empty 200 body is an error too.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

type Json = Record<string, unknown>;
const fixture = (name: string): Json =>
  (JSON.parse(readFileSync(new URL(`../fixtures/gitlab-entities/${name}`, import.meta.url), 'utf8')) as { body: Json }).body;
const SENTINEL = 'glpat-SENTINELwrongshape0000';

const project = fixture('project.json');
const job = (fixture('jobs.json') as unknown as Json[])[0] as Json;
const hook = (fixture('hooks.json') as unknown as Json[])[0] as Json;
const pushRule = fixture('push-rule.json');
const PROJECT = project.id as number;

/** The fixture records with one wrong value per field the test reads. */
const BAD: Record<string, unknown> = {
  [`/api/v4/projects/${PROJECT}`]: {
    ...project,
    star_count: '12',
    archived: 'false',
    forks_count: 3.5,
    last_activity_at: 1_700_000_000,
    namespace: `a string ${SENTINEL}`,
    topics: [1, 2],
    description: { token: SENTINEL },
  },
  [`/api/v4/projects/${PROJECT}/jobs/${String(job.id)}`]: { ...job, name: 42, tag: 'no', duration: `${SENTINEL}`, user: 'nobody', created_at: false },
  [`/api/v4/projects/${PROJECT}/hooks/${String(hook.id)}`]: { ...hook, push_events: 'true', url: { href: SENTINEL } },
  [`/api/v4/projects/${PROJECT}/push_rule`]: { ...pushRule, max_file_size: '5', prevent_secrets: 1, commit_message_regex: [SENTINEL] },
};

let upstream: Server;
let t: TestApp;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/api/v4/projects') {
      // A page far larger than asked for: 200,000 items for per_page=20.
      res.writeHead(200, { 'content-type': 'application/json', 'x-total': '200000' });
      return res.end(JSON.stringify(Array.from({ length: 200_000 }, (_, id) => ({ id }))));
    }
    if (path === '/api/v4/projects/7') {
      // A 200 with nothing in it: not a null project.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '0' });
      return res.end();
    }
    const body = BAD[path];
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { message: '404 Not found' }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  t = await createTestApp({ gitlabUrl: new URL(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`) });
});
afterAll(async () => {
  await t.close();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

const WRONG = { message: 'GitLab sent a value of the wrong type for this field.', extensions: { code: 'UPSTREAM_ERROR' } };

function errorsByPath(errors: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[] = []) {
  return Object.fromEntries(errors.map((e) => [(e.path ?? []).join('.'), { message: e.message, extensions: { code: e.extensions?.code } }]));
}

describe('values of the wrong type from GitLab', () => {
  it('fail only their own fields, for every type, and never echo the value', async () => {
    const res = await t.gql<Json>(`{ project(id: "${PROJECT}") {
      restId name starCount archived forksCount lastActivityAt namespace { restId } topics description
      job(id: "${String(job.id)}") { restId name tag duration user { restId } createdAt stage }
      hook(id: "${String(hook.id)}") { restId pushEvents url jobEvents }
      pushRule { restId maxFileSize preventSecrets commitMessageRegex branchNameRegex }
    } }`);
    const wrong = [
      'starCount',
      'archived',
      'forksCount',
      'lastActivityAt',
      'namespace',
      'topics',
      'description',
      'job.name',
      'job.tag',
      'job.duration',
      'job.user',
      'job.createdAt',
      'hook.pushEvents',
      'hook.url',
      'pushRule.maxFileSize',
      'pushRule.preventSecrets',
      'pushRule.commitMessageRegex',
    ].map((path) => `project.${path}`);
    expect(errorsByPath(res.errors)).toEqual(Object.fromEntries(wrong.map((path) => [path, WRONG])));
    // The rest of each record arrives.
    expect(res.data?.project).toMatchObject({
      restId: PROJECT,
      name: project.name,
      job: { restId: job.id, stage: job.stage },
      hook: { restId: hook.id, jobEvents: hook.job_events },
      pushRule: { restId: pushRule.id, branchNameRegex: pushRule.branch_name_regex },
    });
    expect(JSON.stringify(res)).not.toContain('SENTINEL');
    expect(JSON.stringify(res)).not.toContain('nobody');
  });

  it('refuse a page far larger than asked for with UPSTREAM_ERROR, not a stack overflow', async () => {
    const res = await t.gql('{ projects(first: 20) { nodes { restId } } }');
    expect(res.data).toEqual({ projects: null });
    expect(res.errors?.[0]).toMatchObject({
      path: ['projects'],
      message: 'The upstream sent 200000 items for a page of 20.',
      extensions: { code: 'UPSTREAM_ERROR' },
    });
  });

  it('read an empty 200 body as UPSTREAM_ERROR, not as a project that does not exist', async () => {
    const res = await t.gql('{ project(id: "7") { name } }');
    expect(res.data).toEqual({ project: null });
    expect(res.errors?.[0]).toMatchObject({ path: ['project'], extensions: { code: 'UPSTREAM_ERROR', upstream: { status: 200 } } });
  });
});
