/**
 * The sandbox GitLab's project writes over real HTTP: create (JSON, form and
 * multipart bodies), update, delete, archive, star, fork, fork relations,
 * share, housekeeping, transfer, pull mirror, uploads, snapshot; each role
 * rule and GitLab's error bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STEP_MS, startGitlabSandbox, type GitlabSandbox } from '../../src/sandbox/gitlab/server.js';

type Json = Record<string, unknown>;

interface Reply {
  status: number;
  headers: Headers;
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

async function call(
  method: string,
  path: string,
  options: { token?: string; json?: unknown; form?: Record<string, string | string[]>; multipart?: FormData; headers?: Record<string, string> } = {},
  target: GitlabSandbox = sandbox,
): Promise<Reply> {
  const headers: Record<string, string> = { ...(options.token ? { 'Private-Token': options.token } : {}), ...options.headers };
  let body: string | FormData | undefined;
  if (options.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form) {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(options.form)) for (const v of [value].flat()) search.append(key, v);
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = search.toString();
  } else if (options.multipart) {
    body = options.multipart;
  }
  const response = await fetch(`${target.url}/api/v4${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

const json = (reply: Reply): Json => reply.body as Json;

describe('request bodies', () => {
  it('records the raw body of JSON, form and multipart requests, and an empty body for GET', async () => {
    sandbox.clearRequests();
    await call('GET', '/projects/1');
    await call('POST', '/projects/1/star', { token: 'bob-token', json: { anything: true } });
    await call('POST', '/projects/7/unstar', { token: 'bob-token', form: { 'tag_list[]': ['a', 'b'] } });
    const form = new FormData();
    form.append('file', new Blob(['hello upload']), 'notes.txt');
    await call('POST', '/projects/7/uploads', { token: 'demo-token', multipart: form });
    const bodies = sandbox.requests.map((r) => r.body);
    expect(bodies[0]).toBe('');
    expect(bodies[1]).toBe('{"anything":true}');
    expect(bodies[2]).toBe('tag_list%5B%5D=a&tag_list%5B%5D=b');
    expect(bodies[3]).toContain('hello upload');
    expect(sandbox.requests[3]?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
  });

  it('answers a malformed JSON body with 400', async () => {
    const response = await fetch(`${sandbox.url}/api/v4/projects`, {
      method: 'POST',
      headers: { 'Private-Token': 'demo-token', 'Content-Type': 'application/json' },
      body: '{"name":',
    });
    expect(response.status).toBe(400);
  });
});

describe('POST /projects', () => {
  it('creates a project from JSON in the caller namespace, deriving the path from the name', async () => {
    const reply = await call('POST', '/projects', {
      token: 'demo-token',
      json: { name: 'My New App', description: 'Fresh.', visibility: 'internal', tag_list: ['x', 'y'] },
    });
    expect(reply.status).toBe(201);
    expect(json(reply)).toMatchObject({
      name: 'My New App',
      path: 'my-new-app',
      path_with_namespace: 'demo/my-new-app',
      description: 'Fresh.',
      visibility: 'internal',
      topics: ['x', 'y'],
      archived: false,
      import_status: 'none',
      creator_id: 2,
      default_branch: 'main',
    });
    const created = json(reply);
    expect(created.created_at).toBe('2024-04-01T12:00:00.000Z');
    expect(json(await call('GET', '/projects/demo%2Fmy-new-app', { token: 'demo-token' })).id).toBe(created.id);
  });

  it('creates from a form body, with arrays as name[] and the name taken from the path', async () => {
    const reply = await call('POST', '/projects', {
      token: 'alice-token',
      form: { path: 'from-form', 'tag_list[]': ['one', 'two'], issues_enabled: 'false', merge_method: 'ff', namespace_id: '7' },
    });
    expect(reply.status).toBe(201);
    expect(json(reply)).toMatchObject({
      name: 'from-form',
      path_with_namespace: 'platform/from-form',
      topics: ['one', 'two'],
      issues_enabled: false,
      merge_method: 'ff',
      visibility: 'private',
    });
  });

  it('requires a name or a path', async () => {
    expect(await call('POST', '/projects', { token: 'demo-token', json: { description: 'x' } })).toMatchObject({
      status: 400,
      body: { error: 'name, path are missing, at least one parameter must be provided' },
    });
  });

  it('answers a duplicate name and path with the validation map', async () => {
    expect(await call('POST', '/projects', { token: 'demo-token', json: { name: 'Playground' } })).toMatchObject({
      status: 400,
      body: { message: { name: ['has already been taken'], path: ['has already been taken'] } },
    });
  });

  it('validates the enums, the path format and booleans like Grape and the model', async () => {
    expect((await call('POST', '/projects', { token: 'demo-token', json: { name: 'e1', visibility: 'secret' } })).body).toEqual({
      error: 'visibility does not have a valid value',
    });
    expect((await call('POST', '/projects', { token: 'demo-token', json: { name: 'e2', merge_method: 'squash' } })).body).toEqual({
      error: 'merge_method does not have a valid value',
    });
    expect((await call('POST', '/projects', { token: 'demo-token', form: { name: 'e3', wiki_enabled: 'maybe' } })).body).toEqual({
      error: 'wiki_enabled is invalid',
    });
    const badPath = await call('POST', '/projects', { token: 'demo-token', json: { name: 'e4', path: '-bad.git' } });
    expect(badPath.status).toBe(400);
    expect(Object.keys(json(badPath).message as Json)).toEqual(['path']);
  });

  it('refuses a namespace the caller cannot create projects in', async () => {
    // demo is a Guest of platform (7).
    expect(await call('POST', '/projects', { token: 'demo-token', json: { name: 'nope', namespace_id: 7 } })).toMatchObject({
      status: 400,
      body: { message: { namespace: ['is not valid'] } },
    });
  });

  it('lets only admins set repository_storage', async () => {
    expect((await call('POST', '/projects', { token: 'demo-token', json: { name: 'storage', repository_storage: 'fast' } })).status).toBe(403);
    const reply = await call('POST', '/projects', { token: 'admin-token', json: { name: 'storage', repository_storage: 'fast' } });
    expect(reply.status).toBe(201);
    expect(json(reply).repository_storage).toBe('fast');
  });

  it('ignores parameters the create form does not take', async () => {
    const reply = await call('POST', '/projects', { token: 'demo-token', json: { name: 'ignoring', mirror_user_id: 5, unknown: 'x' } });
    expect(reply.status).toBe(201);
  });

  it('acts as the sudo user for an admin with the sudo scope, and needs a token', async () => {
    const reply = await call('POST', '/projects', { token: 'admin-token', headers: { Sudo: 'bob' }, json: { name: 'Sudo Made' } });
    expect(json(reply)).toMatchObject({ path_with_namespace: 'bob/sudo-made', creator_id: 4 });
    expect((await call('POST', '/projects', { json: { name: 'anon' } })).status).toBe(401);
    expect((await call('POST', '/projects', { token: 'demo-token', headers: { Sudo: 'bob' }, json: { name: 'x' } })).status).toBe(403);
  });
});

describe('POST /projects/user/:user_id', () => {
  it('lets an admin create a project for another user', async () => {
    const reply = await call('POST', '/projects/user/4', { token: 'admin-token', json: { name: 'For Bob' } });
    expect(reply.status).toBe(201);
    expect(json(reply)).toMatchObject({ path_with_namespace: 'bob/for-bob', creator_id: 4 });
  });

  it('refuses non-admins, needs a name and a known user', async () => {
    expect(await call('POST', '/projects/user/4', { token: 'demo-token', json: { name: 'x' } })).toMatchObject({
      status: 403,
      body: { message: '403 Forbidden' },
    });
    expect(await call('POST', '/projects/user/4', { token: 'admin-token', json: { path: 'x' } })).toMatchObject({
      status: 400,
      body: { error: 'name is missing' },
    });
    expect(await call('POST', '/projects/user/99', { token: 'admin-token', json: { name: 'x' } })).toMatchObject({
      status: 404,
      body: { message: '404 User Not Found' },
    });
  });
});

describe('PUT /projects/:id', () => {
  it('lets a Maintainer edit settings and answers the project', async () => {
    const reply = await call('PUT', '/projects/1', {
      token: 'bob-token',
      json: { description: 'Edited by bob.', merge_method: 'rebase_merge', public_builds: false },
    });
    expect(reply.status).toBe(200);
    expect(json(reply)).toMatchObject({ description: 'Edited by bob.', merge_method: 'rebase_merge', public_jobs: false });
    expect(Date.parse(json(reply).updated_at as string)).toBe(sandbox.now());
    await call('PUT', '/projects/1', { token: 'bob-token', json: { public_builds: true } });
  });

  it('refuses Developers, and renames or visibility changes by non-Owners', async () => {
    expect((await call('PUT', '/projects/1', { token: 'demo-token', json: { description: 'x' } })).status).toBe(403);
    expect((await call('PUT', '/projects/1', { token: 'bob-token', json: { name: 'Renamed' } })).status).toBe(403);
    expect((await call('PUT', '/projects/1', { token: 'bob-token', json: { visibility: 'private' } })).status).toBe(403);
  });

  it('needs at least one attribute', async () => {
    const reply = await call('PUT', '/projects/7', { token: 'demo-token', json: {} });
    expect(reply.status).toBe(400);
    expect((json(reply).error as string).endsWith('are missing, at least one parameter must be provided')).toBe(true);
  });

  it('renames and moves the path, so the project is found under its new path', async () => {
    const created = json(await call('POST', '/projects', { token: 'demo-token', json: { name: 'Rename Me' } }));
    const reply = await call('PUT', `/projects/${created.id as number}`, { token: 'demo-token', form: { name: 'Renamed', path: 'renamed' } });
    expect(json(reply)).toMatchObject({ name: 'Renamed', path_with_namespace: 'demo/renamed' });
    expect((await call('GET', '/projects/demo%2Frenamed', { token: 'demo-token' })).status).toBe(200);
    expect((await call('GET', '/projects/demo%2Frename-me', { token: 'demo-token' })).status).toBe(404);
  });

  it('takes an avatar as a multipart file and rejects formats GitLab does not take', async () => {
    const form = new FormData();
    form.append('avatar', new Blob([Buffer.from([0x89, 0x50, 0x4e, 0x47])], { type: 'image/png' }), 'logo.png');
    const reply = await call('PUT', '/projects/7', { token: 'demo-token', multipart: form });
    expect(json(reply).avatar_url).toBe('http://gitlab.sandbox.test/uploads/-/system/project/avatar/7/logo.png');
    const bad = new FormData();
    bad.append('avatar', new Blob(['x']), 'logo.exe');
    expect((await call('PUT', '/projects/7', { token: 'demo-token', multipart: bad })).status).toBe(400);
  });
});

describe('DELETE /projects/:id', () => {
  it('answers 202 Accepted to the Owner, after which the project is gone', async () => {
    const created = json(await call('POST', '/projects', { token: 'demo-token', json: { name: 'Doomed' } }));
    const id = created.id as number;
    expect((await call('DELETE', `/projects/${id}`, { token: 'bob-token' })).status).toBe(404);
    expect(await call('DELETE', `/projects/${id}`, { token: 'demo-token' })).toMatchObject({ status: 202, body: { message: '202 Accepted' } });
    expect((await call('GET', `/projects/${id}`, { token: 'demo-token' })).status).toBe(404);
  });

  it('refuses non-Owners with 403', async () => {
    expect((await call('DELETE', '/projects/1', { token: 'bob-token' })).status).toBe(403);
  });

  it('answers 412 when If-Unmodified-Since is older than the last update', async () => {
    const created = json(await call('POST', '/projects', { token: 'demo-token', json: { name: 'Guarded' } }));
    const id = created.id as number;
    const before = new Date(sandbox.now() - 60_000).toUTCString();
    expect(await call('DELETE', `/projects/${id}`, { token: 'demo-token', headers: { 'If-Unmodified-Since': before } })).toMatchObject({
      status: 412,
      body: { message: '412 Precondition Failed' },
    });
    const after = new Date(sandbox.now() + 60_000).toUTCString();
    expect((await call('DELETE', `/projects/${id}`, { token: 'demo-token', headers: { 'If-Unmodified-Since': after } })).status).toBe(202);
  });
});

describe('archive, unarchive, star and unstar', () => {
  it('archives and unarchives idempotently for the Owner only', async () => {
    expect((await call('POST', '/projects/1/archive', { token: 'bob-token' })).status).toBe(403);
    for (let i = 0; i < 2; i++) {
      const reply = await call('POST', '/projects/7/archive', { token: 'demo-token' });
      expect(reply.status).toBe(201);
      expect(json(reply).archived).toBe(true);
    }
    const admin = await call('POST', '/projects/7/unarchive', { token: 'admin-token' });
    expect(admin.status).toBe(201);
    expect(json(admin).archived).toBe(false);
    expect(json(await call('POST', '/projects/7/unarchive', { token: 'demo-token' })).archived).toBe(false);
  });

  it('stars with 201 and 304 when already starred, unstars with 201 and 304 when not starred', async () => {
    const count = json(await call('GET', '/projects/12', { token: 'demo-token' })).star_count as number;
    const starred = await call('POST', '/projects/12/star', { token: 'demo-token' });
    expect(starred.status).toBe(201);
    expect(json(starred).star_count).toBe(count + 1);
    expect(json(starred)).not.toHaveProperty('owner');
    expect(json(starred)).not.toHaveProperty('permissions');
    const again = await call('POST', '/projects/12/star', { token: 'demo-token' });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(json(await call('POST', '/projects/12/unstar', { token: 'demo-token' })).star_count).toBe(count);
    expect((await call('POST', '/projects/12/unstar', { token: 'demo-token' })).status).toBe(304);
    expect((await call('POST', '/projects/12/star')).status).toBe(401);
  });
});

describe('forks', () => {
  it('forks asynchronously: scheduled at once, then started and finished as the clock advances', async () => {
    const forks = json(await call('GET', '/projects/11', { token: 'demo-token' })).forks_count as number;
    const reply = await call('POST', '/projects/11/fork', { token: 'demo-token', json: { namespace_path: 'demo', name: 'My Recipes', path: 'my-recipes' } });
    expect(reply.status).toBe(201);
    const fork = json(reply);
    expect(fork).toMatchObject({ path_with_namespace: 'demo/my-recipes', import_status: 'scheduled', forked_from_project: { id: 11 } });
    const id = fork.id as number;
    expect(json(await call('GET', '/projects/11', { token: 'demo-token' })).forks_count).toBe(forks + 1);
    sandbox.advance(STEP_MS);
    expect(json(await call('GET', `/projects/${id}`, { token: 'demo-token' })).import_status).toBe('started');
    sandbox.advance(STEP_MS);
    expect(json(await call('GET', `/projects/${id}`, { token: 'demo-token' })).import_status).toBe('finished');
  });

  it('takes namespace_id, namespace (id or path) or defaults to the caller namespace', async () => {
    expect(
      json(await call('POST', '/projects/12/fork', { token: 'demo-token', json: { namespace_id: 6, path: 'rust-a', name: 'Rust A' } })).path_with_namespace,
    ).toBe('demo-group/rust-a');
    expect(
      json(await call('POST', '/projects/12/fork', { token: 'demo-token', form: { namespace: 'demo-group', path: 'rust-b', name: 'Rust B' } }))
        .path_with_namespace,
    ).toBe('demo-group/rust-b');
    expect(json(await call('POST', '/projects/12/fork', { token: 'alice-token' })).path_with_namespace).toBe('alice/rust-experiments');
  });

  it('answers 409 with the validation map when the name is taken, 404 for a namespace it cannot use', async () => {
    expect(await call('POST', '/projects/12/fork', { token: 'alice-token' })).toMatchObject({
      status: 409,
      body: { message: { name: ['has already been taken'], path: ['has already been taken'] } },
    });
    expect(await call('POST', '/projects/12/fork', { token: 'demo-token', json: { namespace_id: 7 } })).toMatchObject({
      status: 404,
      body: { message: '404 Target Namespace Not Found' },
    });
    expect(await call('POST', '/projects/12/fork', { token: 'demo-token', json: { namespace_id: 999 } })).toMatchObject({
      status: 404,
      body: { message: '404 Namespace Not Found' },
    });
  });

  it('creates and removes a fork relation for Owners, with 409 when already forked and 304 when not', async () => {
    const created = json(await call('POST', '/projects', { token: 'demo-token', json: { name: 'Orphan' } }));
    const id = created.id as number;
    expect((await call('POST', `/projects/${id}/fork/11`, { token: 'bob-token' })).status).toBe(404);
    const linked = await call('POST', `/projects/${id}/fork/11`, { token: 'demo-token' });
    expect(linked.status).toBe(201);
    expect(json(linked).forked_from_project).toMatchObject({ id: 11 });
    expect(await call('POST', `/projects/${id}/fork/1`, { token: 'demo-token' })).toMatchObject({ status: 409, body: { message: 'Project already forked' } });
    expect((await call('DELETE', `/projects/${id}/fork`, { token: 'demo-token' })).status).toBe(204);
    expect(json(await call('GET', `/projects/${id}`, { token: 'demo-token' }))).not.toHaveProperty('forked_from_project');
    expect((await call('DELETE', `/projects/${id}/fork`, { token: 'demo-token' })).status).toBe(304);
    expect((await call('DELETE', '/projects/14/fork', { token: 'bob-token' })).status).toBe(403);
  });
});

describe('share, housekeeping, transfer, pull mirror', () => {
  it('shares with a group (201), refuses a second share with 409, unshares with 204 then 404', async () => {
    const reply = await call('POST', '/projects/7/share', { token: 'demo-token', json: { group_id: 6, group_access: 30, expires_at: '2031-01-31' } });
    expect(reply.status).toBe(201);
    expect(json(reply)).toMatchObject({ project_id: 7, group_id: 6, group_access: 30, expires_at: '2031-01-31' });
    expect(json(await call('GET', '/projects/7', { token: 'demo-token' })).shared_with_groups).toEqual([
      { group_id: 6, group_name: 'Demo Group', group_full_path: 'demo-group', group_access_level: 30, expires_at: '2031-01-31' },
    ]);
    expect(await call('POST', '/projects/7/share', { token: 'demo-token', json: { group_id: 6, group_access: 20 } })).toMatchObject({
      status: 409,
      body: { message: 'Group already shared with this group' },
    });
    expect((await call('DELETE', '/projects/7/share/6', { token: 'demo-token' })).status).toBe(204);
    expect(await call('DELETE', '/projects/7/share/6', { token: 'demo-token' })).toMatchObject({ status: 404, body: { message: '404 Group Link Not Found' } });
  });

  it('validates share parameters and the group', async () => {
    expect((await call('POST', '/projects/7/share', { token: 'demo-token', json: { group_id: 6 } })).body).toEqual({ error: 'group_access is missing' });
    expect((await call('POST', '/projects/7/share', { token: 'demo-token', json: { group_id: 6, group_access: 35 } })).body).toEqual({
      error: 'group_access does not have a valid value',
    });
    expect((await call('POST', '/projects/7/share', { token: 'demo-token', json: { group_id: 6, group_access: 30, expires_at: 'soon' } })).body).toEqual({
      error: 'expires_at is invalid',
    });
    expect((await call('POST', '/projects/7/share', { token: 'demo-token', json: { group_id: 999, group_access: 30 } })).status).toBe(404);
    expect((await call('POST', '/projects/1/share', { token: 'demo-token', json: { group_id: 8, group_access: 30 } })).status).toBe(403);
  });

  it('starts housekeeping (201), refuses a second run while it holds the lease (409)', async () => {
    expect(await call('POST', '/projects/5/housekeeping', { token: 'demo-token' })).toMatchObject({ status: 201, body: null });
    expect((await call('POST', '/projects/5/housekeeping', { token: 'demo-token' })).status).toBe(409);
    sandbox.advance(STEP_MS);
    expect((await call('POST', '/projects/5/housekeeping', { token: 'demo-token' })).status).toBe(201);
    expect((await call('POST', '/projects/1/housekeeping', { token: 'demo-token' })).status).toBe(403);
  });

  it('transfers to another namespace for the Owner, refusing taken paths and foreign namespaces', async () => {
    const created = json(await call('POST', '/projects', { token: 'demo-token', json: { name: 'Mover' } }));
    const id = created.id as number;
    const moved = await call('PUT', `/projects/${id}/transfer`, { token: 'demo-token', form: { namespace: 'demo-group' } });
    expect(moved.status).toBe(200);
    expect(json(moved)).toMatchObject({ path_with_namespace: 'demo-group/mover', namespace: { id: 6, kind: 'group' } });
    expect((await call('PUT', `/projects/${id}/transfer`, { token: 'demo-token', json: { namespace: 7 } })).status).toBe(400);
    expect((await call('PUT', `/projects/${id}/transfer`, { token: 'demo-token', json: { namespace: 'nowhere' } })).status).toBe(404);
    expect((await call('PUT', `/projects/${id}/transfer`, { token: 'demo-token', json: {} })).body).toEqual({ error: 'namespace is missing' });
    expect((await call('PUT', '/projects/1/transfer', { token: 'bob-token', json: { namespace: 4 } })).status).toBe(403);
    const clash = json(await call('POST', '/projects', { token: 'demo-token', json: { name: 'Mover' } }));
    expect(await call('PUT', `/projects/${clash.id as number}/transfer`, { token: 'demo-token', json: { namespace: 6 } })).toMatchObject({
      status: 400,
      body: { message: 'Failed to transfer project {:namespace=>["Project with same name or path in target namespace already exists"]}' },
    });
  });

  it('starts a pull mirror with 200 on a mirrored project and 400 otherwise', async () => {
    expect((await call('POST', '/projects/3/mirror/pull', { token: 'bob-token' })).status).toBe(200);
    expect(json(await call('GET', '/projects/3', { token: 'bob-token' })).import_status).toBe('scheduled');
    expect(await call('POST', '/projects/1/mirror/pull', { token: 'bob-token' })).toMatchObject({
      status: 400,
      body: { message: 'The project is not mirrored' },
    });
    expect((await call('POST', '/projects/3/mirror/pull', { token: 'demo-token' })).status).toBe(403);
  });
});

describe('uploads and snapshot', () => {
  it('uploads a file and answers alt, url, full_path and markdown', async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.from([1, 2, 3])], { type: 'image/png' }), 'dk.png');
    const reply = await call('POST', '/projects/demo%2Fplayground/uploads', { token: 'demo-token', multipart: form });
    expect(reply.status).toBe(201);
    const upload = json(reply);
    expect(upload.alt).toBe('dk');
    expect(upload.url).toMatch(/^\/uploads\/[0-9a-f]{32}\/dk\.png$/);
    expect(upload.full_path).toBe(`/-/project/7${upload.url as string}`);
    expect(upload.markdown).toBe(`![dk](${upload.url as string})`);
  });

  it('requires the file part', async () => {
    expect((await call('POST', '/projects/7/uploads', { token: 'demo-token', json: {} })).body).toEqual({ error: 'file is missing' });
    expect((await call('POST', '/projects/7/uploads', { token: 'demo-token', form: { file: 'text' } })).body).toEqual({ error: 'file is invalid' });
    // Grape checks parameters first, then the project: a missing file is 400 even on a hidden project.
    expect((await call('POST', '/projects/10/uploads', { token: 'demo-token', multipart: new FormData() })).status).toBe(400);
    const form = new FormData();
    form.append('file', new Blob(['x']), 'x.txt');
    expect((await call('POST', '/projects/10/uploads', { token: 'demo-token', multipart: form })).status).toBe(404);
  });

  it('streams an uncompressed tar of the repository or the wiki to admins only', async () => {
    const response = await fetch(`${sandbox.url}/api/v4/projects/1/snapshot?wiki=true`, { headers: { 'Private-Token': 'admin-token' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-tar');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="core.wiki.git.tar"');
    const tar = Buffer.from(await response.arrayBuffer());
    expect(tar.length % 512).toBe(0);
    expect(String(tar.length)).toBe(response.headers.get('content-length'));
    const names: string[] = [];
    for (let offset = 0; offset + 512 <= tar.length; ) {
      const name = tar
        .subarray(offset, offset + 100)
        .toString('utf8')
        .replace(/\0.*$/s, '');
      if (name === '') break;
      expect(tar.subarray(offset + 257, offset + 262).toString()).toBe('ustar');
      names.push(name);
      const size = parseInt(tar.subarray(offset + 124, offset + 136).toString(), 8);
      offset += 512 + Math.ceil(size / 512) * 512;
    }
    expect(names).toEqual(['HEAD', 'config', 'description', 'refs/heads/main', 'packed-refs']);
    expect((await call('GET', '/projects/1/snapshot', { token: 'alice-token' })).status).toBe(403);
    expect((await call('GET', '/projects/1/snapshot')).status).toBe(401);
  });
});

describe('routing', () => {
  it('answers 405 for another method on a known write route', async () => {
    for (const [method, path] of [
      ['GET', '/projects/1/star'],
      ['PATCH', '/projects/1'],
      ['GET', '/projects/1/fork'],
      ['PUT', '/projects/1/share'],
    ] as const) {
      expect(await call(method, path, { token: 'demo-token' })).toMatchObject({ status: 405, body: { error: '405 Not Allowed' } });
    }
  });
});
