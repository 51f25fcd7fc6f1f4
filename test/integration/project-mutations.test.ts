import { afterAll, beforeEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(async () => {
  await t.close();
});

beforeEach(() => t.resetCalls());

interface Payload {
  project: Record<string, unknown> | null;
  errors: { message: string; field: string[]; code: string }[];
  changed?: boolean;
}

const PROJECT_FIELDS = 'project { restId name path pathWithNamespace description visibility archived starCount importStatus } errors { message field code }';

/** The JSON body the sandbox received on the last call matching method and path. */
function sentBody(method: string, path: RegExp): Record<string, unknown> {
  const call = t.sandbox.requests.filter((r) => r.method === method && path.test(r.path)).at(-1);
  expect(call, `${method} ${path}`).toBeDefined();
  return JSON.parse((call as unknown as { body: string }).body || '{}') as Record<string, unknown>;
}

describe('projectCreate', () => {
  it('creates a project from a name, sending only the given parameters', async () => {
    const res = await t.gql<{ projectCreate: Payload }>(`mutation($input: ProjectCreateInput!) { projectCreate(input: $input) { ${PROJECT_FIELDS} } }`, {
      input: { name: 'New Thing', description: 'made by a test', visibility: 'INTERNAL', tagList: ['a', 'b'], issuesEnabled: false },
    });
    expect(res.errors).toBeUndefined();
    expect(res.data?.projectCreate.errors).toEqual([]);
    expect(res.data?.projectCreate.project).toMatchObject({
      name: 'New Thing',
      path: 'new-thing',
      pathWithNamespace: 'demo/new-thing',
      visibility: 'INTERNAL',
    });
    expect(sentBody('POST', /^\/api\/v4\/projects$/)).toEqual({
      name: 'New Thing',
      description: 'made by a test',
      visibility: 'internal',
      tag_list: ['a', 'b'],
      issues_enabled: false,
    });
    expect(t.calls()[0]?.headers['private-token']).toBe('demo-token');
  });

  it('refuses an input with neither name nor path before calling GitLab', async () => {
    const res = await t.gql<{ projectCreate: Payload }>(`mutation { projectCreate(input: { description: "x" }) { ${PROJECT_FIELDS} } }`);
    expect(res.data?.projectCreate).toEqual({ project: null, errors: [{ message: 'Give a name or a path.', field: ['input', 'name'], code: 'MISSING' }] });
    expect(t.calls()).toHaveLength(0);
  });

  it("returns GitLab's validation map as user errors with the field path", async () => {
    const res = await t.gql<{ projectCreate: Payload }>(`mutation { projectCreate(input: { name: "Playground", path: "playground" }) { ${PROJECT_FIELDS} } }`);
    expect(res.errors).toBeUndefined();
    expect(res.data?.projectCreate.project).toBeNull();
    const errors = res.data?.projectCreate.errors ?? [];
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.some((e) => e.code === 'TAKEN' && e.field.join('.').startsWith('input.'))).toBe(true);
  });

  it("maps a fork's 409 validation map, dotted keys included, onto the input fields the caller sent", async () => {
    const res = await t.gql<{ projectFork: Payload }>(
      `mutation { projectFork(input: { id: "alice/recipes", namespacePath: "demo", name: "Playground", path: "playground" }) { ${PROJECT_FIELDS} } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(t.calls({ method: 'POST' }).at(-1)?.path).toBe('/api/v4/projects/alice%2Frecipes/fork');
    expect(res.data?.projectFork).toEqual({
      project: null,
      errors: [
        { message: 'name has already been taken', field: ['input', 'name'], code: 'TAKEN' },
        { message: 'path has already been taken', field: ['input', 'path'], code: 'TAKEN' },
      ],
    });
  });

  it('keeps the scope GitLab names when a token lacks one', async () => {
    const res = await t.gql<{ projectUpdate: Payload }>(
      `mutation { projectUpdate(input: { id: "demo/playground", description: "as alice" }) { ${PROJECT_FIELDS} } }`,
      {},
      { token: 'admin-nosudo-token', headers: { sudo: 'alice' } },
    );
    expect(res.data?.projectUpdate.errors).toEqual([
      { message: 'The request requires higher privileges than provided by the access token. The token needs the sudo scope.', field: [], code: 'FORBIDDEN' },
    ]);
  });

  it('does not accept a parameter the create form does not take', async () => {
    const res = await t.gql(`mutation { projectCreate(input: { name: "x", mirrorUserId: 3 }) { errors { message } } }`);
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.message).toMatch(/mirrorUserId/);
    expect(t.calls()).toHaveLength(0);
  });

  it('creates a project for another user as admin, and refuses a non-admin', async () => {
    const asAdmin = await t.gql<{ projectCreateForUser: Payload }>(
      `mutation { projectCreateForUser(input: { userId: 4, name: "Given To Bob" }) { ${PROJECT_FIELDS} } }`,
      {},
      { token: 'admin-token' },
    );
    expect(asAdmin.data?.projectCreateForUser.errors).toEqual([]);
    expect(asAdmin.data?.projectCreateForUser.project?.pathWithNamespace).toBe('bob/given-to-bob');
    expect(t.calls().at(-1)?.path).toBe('/api/v4/projects/user/4');
    const asDemo = await t.gql<{ projectCreateForUser: Payload }>(
      `mutation { projectCreateForUser(input: { userId: 4, name: "Nope" }) { ${PROJECT_FIELDS} } }`,
    );
    expect(asDemo.data?.projectCreateForUser.project).toBeNull();
    expect(asDemo.data?.projectCreateForUser.errors[0]?.code).toBe('FORBIDDEN');
  });

  it('reports an upstream failure as a top-level error with a null payload', async () => {
    t.sandbox.addFault({ method: 'POST', path: '/api/v4/projects', status: 502, times: 1 });
    const res = await t.gql(`mutation { projectCreate(input: { name: "x" }) { errors { message } } }`);
    expect(res.data).toEqual({ projectCreate: null });
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', upstream: { status: 502, method: 'POST', path: '/api/v4/projects' } });
  });

  it('reports a bad token as UNAUTHENTICATED', async () => {
    const res = await t.gql(`mutation { projectCreate(input: { name: "x" }) { errors { message } } }`, {}, { token: 'nope-nope' });
    expect(res.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe('projectUpdate and projectDelete', () => {
  it('updates the given fields by full path', async () => {
    const res = await t.gql<{ projectUpdate: Payload }>(
      `mutation { projectUpdate(input: { id: "demo/playground", description: "changed", mergeMethod: FF }) { ${PROJECT_FIELDS} } }`,
    );
    expect(res.data?.projectUpdate.errors).toEqual([]);
    expect(res.data?.projectUpdate.project?.description).toBe('changed');
    expect(t.calls()[0]).toMatchObject({ method: 'PUT', path: '/api/v4/projects/demo%2Fplayground' });
    expect(sentBody('PUT', /playground$/)).toEqual({ description: 'changed', merge_method: 'ff' });
  });

  it('reads back every setting it writes: CI config path, LFS, packages', async () => {
    const res = await t.gql<{ projectUpdate: { project: Record<string, unknown> | null; errors: unknown[] } }>(
      `mutation { projectUpdate(input: { id: "demo/playground", ciConfigPath: "ci/main.yml", lfsEnabled: false, packagesEnabled: false }) {
        project { ciConfigPath lfsEnabled packagesEnabled mirror importUrl emptyRepo } errors { message } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.projectUpdate).toEqual({
      project: { ciConfigPath: 'ci/main.yml', lfsEnabled: false, packagesEnabled: false, mirror: false, importUrl: null, emptyRepo: false },
      errors: [],
    });
    const read = await t.gql<{ project: Record<string, unknown> }>('{ project(fullPath: "demo/playground") { ciConfigPath lfsEnabled packagesEnabled } }');
    expect(read.data?.project).toEqual({ ciConfigPath: 'ci/main.yml', lfsEnabled: false, packagesEnabled: false });
  });

  it("reads a mirror's settings and its import URL without the credentials in it", async () => {
    const res = await t.gql<{ project: Record<string, unknown> }>(
      '{ project(fullPath: "platform/docs") { mirror mirrorTriggerBuilds mirrorUserId onlyMirrorProtectedBranches mirrorOverwritesDivergedBranches importUrl } }',
      {},
      { token: 'admin-token' },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.project).toMatchObject({
      mirror: true,
      mirrorUserId: expect.any(Number),
      onlyMirrorProtectedBranches: false,
      importUrl: 'https://github.com/example/docs.git',
    });
  });

  it('refuses repository storage from a non-admin', async () => {
    const res = await t.gql<{ projectUpdate: Payload }>(
      `mutation { projectUpdate(input: { id: "demo/playground", repositoryStorage: "other" }) { ${PROJECT_FIELDS} } }`,
    );
    expect(res.data?.projectUpdate.errors[0]?.code).toBe('FORBIDDEN');
  });

  it('deletes a project', async () => {
    const created = await t.gql<{ projectCreate: Payload }>(`mutation { projectCreate(input: { name: "Short Lived" }) { ${PROJECT_FIELDS} } }`);
    const id = created.data?.projectCreate.project?.restId;
    const res = await t.gql<{ projectDelete: Payload }>(`mutation($id: ID!) { projectDelete(input: { id: $id }) { ${PROJECT_FIELDS} } }`, { id: String(id) });
    expect(res.data?.projectDelete).toEqual({ project: null, errors: [] });
    expect(t.calls().at(-1)).toMatchObject({ method: 'DELETE', path: `/api/v4/projects/${id}` });
  });
});

describe('preconditions, methods and sudo', () => {
  it('refuses a delete when the project changed since ifUnmodifiedSince (412)', async () => {
    const res = await t.gql<{ projectDelete: Payload }>(
      `mutation { projectDelete(input: { id: "demo/legacy-app", ifUnmodifiedSince: "2001-01-01T00:00:00Z" }) { ${PROJECT_FIELDS} } }`,
    );
    expect(res.data?.projectDelete.errors).toEqual([{ message: '412 Precondition Failed', field: [], code: 'PRECONDITION_FAILED' }]);
    expect(t.calls()[0]?.headers['if-unmodified-since']).toBe('Mon, 01 Jan 2001 00:00:00 GMT');
  });

  it('reports a 405 from GitLab as NOT_ALLOWED', async () => {
    t.sandbox.addFault({ method: 'POST', path: /\/housekeeping$/, status: 405, body: '{"message":"405 Method Not Allowed"}', times: 1 });
    const res = await t.gql<{ projectHousekeeping: Payload }>(`mutation { projectHousekeeping(input: { id: "demo/playground" }) { errors { code message } } }`);
    expect(res.data?.projectHousekeeping.errors).toEqual([{ code: 'NOT_ALLOWED', message: '405 Method Not Allowed' }]);
  });

  it('acts as another user with Sudo from an admin, by header or query', async () => {
    const byHeader = await t.gql<{ projectCreate: Payload }>(
      `mutation { projectCreate(input: { name: "Sudo Header" }) { ${PROJECT_FIELDS} } }`,
      {},
      { token: 'admin-token', headers: { sudo: 'bob' } },
    );
    expect(byHeader.data?.projectCreate.project?.pathWithNamespace).toBe('bob/sudo-header');
    const response = await fetch(new URL('?sudo=alice', t.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'private-token': 'admin-token' },
      body: JSON.stringify({ query: `mutation { projectCreate(input: { name: "Sudo Query" }) { ${PROJECT_FIELDS} } }` }),
    });
    const byQuery = (await response.json()) as { data: { projectCreate: Payload } };
    expect(byQuery.data.projectCreate.project?.pathWithNamespace).toBe('alice/sudo-query');
  });

  it('refuses Sudo from a non-admin, from a token without the sudo scope, and for an unknown user', async () => {
    const mutation = `mutation { projectCreate(input: { name: "Nope" }) { ${PROJECT_FIELDS} } }`;
    const nonAdmin = await t.gql<{ projectCreate: Payload }>(mutation, {}, { headers: { sudo: 'bob' } });
    expect(nonAdmin.data?.projectCreate.errors).toEqual([{ message: '403 Forbidden - Must be admin to use sudo', field: [], code: 'FORBIDDEN' }]);
    const noScope = await t.gql<{ projectCreate: Payload }>(mutation, {}, { token: 'admin-nosudo-token', headers: { sudo: 'bob' } });
    expect(noScope.data?.projectCreate.errors[0]).toMatchObject({ code: 'FORBIDDEN', message: expect.stringMatching(/higher privileges|sudo/) });
    const unknown = await t.gql(mutation, {}, { token: 'admin-token', headers: { sudo: 'nobody-at-all' } });
    expect(unknown.data).toEqual({ projectCreate: null });
    expect(unknown.errors?.[0]).toMatchObject({ extensions: { code: 'NOT_FOUND' }, message: expect.stringContaining('nobody-at-all') });
  });
});

describe('archive and star', () => {
  it('archives idempotently as owner, and refuses a guest', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await t.gql<{ projectArchive: Payload }>(`mutation { projectArchive(input: { id: "demo/dotfiles" }) { ${PROJECT_FIELDS} } }`);
      expect(res.data?.projectArchive).toMatchObject({ project: { archived: true }, errors: [] });
    }
    const back = await t.gql<{ projectUnarchive: Payload }>(`mutation { projectUnarchive(input: { id: "demo/dotfiles" }) { ${PROJECT_FIELDS} } }`);
    expect(back.data?.projectUnarchive).toMatchObject({ project: { archived: false }, errors: [] });
    const guest = await t.gql<{ projectArchive: Payload }>(`mutation { projectArchive(input: { id: "platform/infra" }) { ${PROJECT_FIELDS} } }`);
    expect(guest.data?.projectArchive.project).toBeNull();
    expect(guest.data?.projectArchive.errors[0]?.code).toBe('FORBIDDEN');
  });

  it('tells a star that changed nothing (304) apart without failing', async () => {
    const first = await t.gql<{ projectStar: Payload }>(`mutation { projectStar(input: { id: "demo-group/website" }) { changed ${PROJECT_FIELDS} } }`);
    expect(first.errors).toBeUndefined();
    expect(first.data?.projectStar).toMatchObject({ changed: false, errors: [], project: { pathWithNamespace: 'demo-group/website' } });
    const unstar = await t.gql<{ projectUnstar: Payload }>(`mutation { projectUnstar(input: { id: "demo-group/website" }) { changed ${PROJECT_FIELDS} } }`);
    expect(unstar.data?.projectUnstar).toMatchObject({ changed: true, errors: [] });
    const again = await t.gql<{ projectUnstar: Payload }>(`mutation { projectUnstar(input: { id: "demo-group/website" }) { changed ${PROJECT_FIELDS} } }`);
    expect(again.data?.projectUnstar).toMatchObject({ changed: false, errors: [] });
    const star = await t.gql<{ projectStar: Payload }>(`mutation { projectStar(input: { id: "demo-group/website" }) { changed ${PROJECT_FIELDS} } }`);
    expect(star.data?.projectStar).toMatchObject({ changed: true, errors: [] });
  });
});

describe('forks', () => {
  it('forks asynchronously into a namespace given by path, sending both GitLab 11 and current parameters', async () => {
    const res = await t.gql<{ projectFork: Payload }>(
      `mutation { projectFork(input: { id: "alice/recipes", namespacePath: "demo", path: "recipes-copy" }) { ${PROJECT_FIELDS} } }`,
    );
    expect(res.data?.projectFork.errors).toEqual([]);
    expect(res.data?.projectFork.project).toMatchObject({ pathWithNamespace: 'demo/recipes-copy' });
    expect(res.data?.projectFork.project?.importStatus).not.toBe('finished');
    expect(sentBody('POST', /\/fork$/)).toEqual({ namespace: 'demo', namespace_path: 'demo', path: 'recipes-copy' });
  });

  it('needs exactly one target namespace', async () => {
    const res = await t.gql<{ projectFork: Payload }>(`mutation { projectFork(input: { id: "alice/recipes" }) { ${PROJECT_FIELDS} } }`);
    expect(res.data?.projectFork.errors[0]).toMatchObject({ field: ['input', 'namespaceId'], code: 'MISSING' });
    expect(t.calls()).toHaveLength(0);
  });

  it('creates and removes a fork relation as owner, and refuses others', async () => {
    const create = await t.gql<{ projectForkRelationCreate: Payload }>(
      `mutation { projectForkRelationCreate(input: { id: "demo/playground", forkedFromId: "platform/core" }) { ${PROJECT_FIELDS} } }`,
    );
    expect(create.data?.projectForkRelationCreate.errors).toEqual([]);
    const remove = await t.gql<{ projectForkRelationDelete: Payload }>(
      `mutation { projectForkRelationDelete(input: { id: "demo/playground" }) { ${PROJECT_FIELDS} } }`,
    );
    expect(remove.data?.projectForkRelationDelete.errors).toEqual([]);
    const refused = await t.gql<{ projectForkRelationDelete: Payload }>(
      `mutation { projectForkRelationDelete(input: { id: "platform/core" }) { ${PROJECT_FIELDS} } }`,
    );
    expect(refused.data?.projectForkRelationDelete.errors[0]?.code).toBe('FORBIDDEN');
  });
});

describe('sharing, transfer and maintenance', () => {
  it('shares with a group and unshares', async () => {
    const share = await t.gql<{ projectShare: Payload }>(
      `mutation { projectShare(input: { id: "demo/playground", groupId: 7, groupAccess: DEVELOPER, expiresAt: "2030-01-31" }) { errors { message field code } project { sharedWithGroups { groupId groupAccessLevel groupRole } } } }`,
    );
    expect(share.data?.projectShare.errors).toEqual([]);
    expect(sentBody('POST', /\/share$/)).toEqual({ group_id: 7, group_access: 30, expires_at: '2030-01-31' });
    expect(share.data?.projectShare.project?.sharedWithGroups).toContainEqual({ groupId: 7, groupAccessLevel: 30, groupRole: 'DEVELOPER' });
    const unshare = await t.gql<{ projectUnshare: Payload }>(`mutation { projectUnshare(input: { id: "demo/playground", groupId: 7 }) { errors { code } } }`);
    expect(unshare.data?.projectUnshare.errors).toEqual([]);
    expect(t.calls().some((c) => c.method === 'DELETE' && c.path === '/api/v4/projects/demo%2Fplayground/share/7')).toBe(true);
  });

  it('refuses a malformed expiry date before calling GitLab', async () => {
    const res = await t.gql<{ projectShare: Payload }>(
      `mutation { projectShare(input: { id: "demo/playground", groupId: 7, groupAccess: GUEST, expiresAt: "tomorrow" }) { errors { field code } } }`,
    );
    expect(res.data?.projectShare.errors).toEqual([{ field: ['input', 'expiresAt'], code: 'INVALID' }]);
    expect(t.calls()).toHaveLength(0);
  });

  it('transfers a project to another namespace', async () => {
    const created = await t.gql<{ projectCreate: Payload }>(`mutation { projectCreate(input: { name: "Moving Box" }) { ${PROJECT_FIELDS} } }`);
    const id = String(created.data?.projectCreate.project?.restId);
    const res = await t.gql<{ projectTransfer: Payload }>(
      `mutation($id: ID!) { projectTransfer(input: { id: $id, namespace: "demo-group" }) { ${PROJECT_FIELDS} } }`,
      { id },
    );
    expect(res.data?.projectTransfer.errors).toEqual([]);
    expect(res.data?.projectTransfer.project?.pathWithNamespace).toBe('demo-group/moving-box');
  });

  it('starts housekeeping', async () => {
    t.resetCalls();
    const res = await t.gql<{ projectHousekeeping: Payload }>(
      'mutation { projectHousekeeping(input: { id: "demo/playground" }) { errors { code } project { name } } }',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.projectHousekeeping.errors).toEqual([]);
    expect(t.calls().map((c) => `${c.method} ${c.path}`)).toContain('POST /api/v4/projects/demo%2Fplayground/housekeeping');
  });

  it('starts a mirror pull of a pull mirror, and says why a project that is not one cannot pull', async () => {
    // platform/docs is the sandbox's pull mirror; alice owns its group.
    t.resetCalls();
    const pulled = await t.gql<{ projectMirrorPull: Payload }>(
      'mutation { projectMirrorPull(input: { id: "platform/docs" }) { errors { code message } } }',
      {},
      { token: 'alice-token' },
    );
    expect(pulled.errors).toBeUndefined();
    expect(pulled.data?.projectMirrorPull.errors).toEqual([]);
    expect(t.calls().map((c) => `${c.method} ${c.path}`)).toContain('POST /api/v4/projects/platform%2Fdocs/mirror/pull');
    const refused = await t.gql<{ projectMirrorPull: { errors: { code: string; message: string }[] } }>(
      'mutation { projectMirrorPull(input: { id: "demo/playground" }) { errors { code message } } }',
    );
    expect(refused.data?.projectMirrorPull.errors).toEqual([expect.objectContaining({ message: expect.stringMatching(/not mirrored/) })]);
  });
});

describe('projectUpload', () => {
  it('uploads a file with the GraphQL multipart request spec', async () => {
    const form = new FormData();
    form.append(
      'operations',
      JSON.stringify({
        query: 'mutation($file: File!) { projectUpload(input: { id: "demo/playground", file: $file }) { upload { alt url markdown } errors { code } } }',
        variables: { file: null },
      }),
    );
    form.append('map', JSON.stringify({ 0: ['variables.file'] }));
    form.append('0', new Blob(['hello upload'], { type: 'text/plain' }), 'notes.txt');
    const response = await fetch(t.url, { method: 'POST', headers: { 'private-token': 'demo-token', 'graphql-preflight': '1' }, body: form });
    const body = (await response.json()) as { data: { projectUpload: { upload: { alt: string; url: string; markdown: string } } } };
    expect(body, JSON.stringify(body)).toHaveProperty('data.projectUpload.upload');
    expect(body.data.projectUpload.upload.alt).toBe('notes');
    expect(body.data.projectUpload.upload.markdown).toContain(body.data.projectUpload.upload.url);
    const call = t.calls({ method: 'POST', path: /\/uploads$/ })[0] as unknown as { headers: Record<string, string>; body: string };
    expect(call.headers['content-type']).toMatch(/^multipart\/form-data/);
    expect(call.body).toContain('hello upload');
  });

  it('refuses a multipart request without the CSRF preflight header', async () => {
    const form = new FormData();
    form.append('operations', JSON.stringify({ query: '{ __typename }' }));
    form.append('map', '{}');
    const response = await fetch(t.url, { method: 'POST', headers: { 'private-token': 'demo-token' }, body: form });
    expect(response.status).toBe(403);
    expect(JSON.stringify(await response.json())).toMatch(/CSRF/);
  });
});

describe('upload limits', () => {
  let small: TestApp;
  beforeAll(async () => {
    small = await createTestApp({ env: { MAX_UPLOAD_BYTES: '1024' } });
  });
  afterAll(async () => {
    await small.close();
  });

  it('refuses a file over MAX_UPLOAD_BYTES with a clear error and no upstream call', async () => {
    const form = new FormData();
    form.append(
      'operations',
      JSON.stringify({
        query: 'mutation($file: File!) { projectUpload(input: { id: "demo/playground", file: $file }) { upload { url } } }',
        variables: { file: null },
      }),
    );
    form.append('map', JSON.stringify({ 0: ['variables.file'] }));
    form.append('0', new Blob([new Uint8Array(4096)]), 'big.bin');
    const response = await fetch(small.url, { method: 'POST', headers: { 'private-token': 'demo-token', 'graphql-preflight': '1' }, body: form });
    const text = await response.text();
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(text).toMatch(/size|limit/i);
    expect(small.calls({ path: /uploads/ })).toHaveLength(0);
  });
});
