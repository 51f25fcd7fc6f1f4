/**
 * The sandbox GitLab over real HTTP: pagination, filters, visibility, forms,
 * auth and sudo, errors, faults, request recording, and GitLab's own JSON
 * Schemas (reference/gitlab/schemas, a sibling of the repository).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USERS, startGitlabSandbox, type GitlabSandbox } from '../../src/sandbox/gitlab/server.js';

type Json = Record<string, unknown>;

interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
}

let sandbox: GitlabSandbox;

beforeAll(async () => {
  sandbox = await startGitlabSandbox();
});

afterAll(async () => {
  await sandbox.close();
});

afterEach(() => {
  sandbox.clearFaults();
  sandbox.setLatency(0);
});

async function get(path: string, token?: string, headers: Record<string, string> = {}, target: GitlabSandbox = sandbox): Promise<Reply> {
  const response = await fetch(`${target.url}/api/v4${path}`, { headers: { ...(token ? { 'Private-Token': token } : {}), ...headers } });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}

function list(reply: Reply): Json[] {
  expect(reply.status).toBe(200);
  expect(Array.isArray(reply.body)).toBe(true);
  return reply.body as Json[];
}

function ids(reply: Reply): number[] {
  return list(reply).map((p) => p.id as number);
}

function sorted(values: number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** Link header as rel -> URL. */
function links(reply: Reply): Record<string, string> {
  const result: Record<string, string> = {};
  for (const part of (reply.headers.get('link') ?? '').split(', ')) {
    const match = /^<([^>]+)>; rel="(\w+)"$/.exec(part);
    if (match?.[1] && match[2]) result[match[2]] = match[1];
  }
  return result;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const FORKS = range(14, 33);
const PUBLIC_FORKS = FORKS.filter((id) => id !== 30 && id !== 31);
const ANONYMOUS_VISIBLE = sorted([1, 4, 5, 7, 11, ...PUBLIC_FORKS]);
const DEMO_VISIBLE = sorted([1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, ...FORKS.filter((id) => id !== 30)]);
const DEMO_FORKS = [14, 19, 24, 29];
const DEMO_GROUP_FORKS = [18, 23, 28, 33];
const SIMPLE_KEYS = [
  'avatar_url',
  'created_at',
  'default_branch',
  'description',
  'forks_count',
  'http_url_to_repo',
  'id',
  'last_activity_at',
  'name',
  'name_with_namespace',
  'namespace',
  'path',
  'path_with_namespace',
  'readme_url',
  'ssh_url_to_repo',
  'star_count',
  'tag_list',
  'topics',
  'web_url',
].sort();

describe('sandbox GitLab pagination', () => {
  it('sends counts, rel next/first/last and an empty X-Prev-Page on the first page', async () => {
    const reply = await get('/projects?per_page=10');
    expect(list(reply)).toHaveLength(10);
    expect(reply.headers.get('x-total')).toBe('23');
    expect(reply.headers.get('x-total-pages')).toBe('3');
    expect(reply.headers.get('x-page')).toBe('1');
    expect(reply.headers.get('x-per-page')).toBe('10');
    expect(reply.headers.get('x-next-page')).toBe('2');
    expect(reply.headers.get('x-prev-page')).toBe('');
    expect(reply.headers.get('link')).toBe(
      `<${sandbox.url}/api/v4/projects?page=2&per_page=10>; rel="next", ` +
        `<${sandbox.url}/api/v4/projects?page=1&per_page=10>; rel="first", ` +
        `<${sandbox.url}/api/v4/projects?page=3&per_page=10>; rel="last"`,
    );
  });

  it('sends prev, next, first and last on a middle page', async () => {
    const reply = await get('/projects?per_page=10&page=2');
    expect(list(reply)).toHaveLength(10);
    expect(Object.keys(links(reply))).toEqual(['prev', 'next', 'first', 'last']);
    expect(reply.headers.get('x-prev-page')).toBe('1');
    expect(reply.headers.get('x-next-page')).toBe('3');
  });

  it('sends no rel=next and an empty X-Next-Page on the last page', async () => {
    const reply = await get('/projects?per_page=10&page=3');
    expect(list(reply)).toHaveLength(3);
    expect(Object.keys(links(reply))).toEqual(['prev', 'first', 'last']);
    expect(reply.headers.get('x-next-page')).toBe('');
    expect(reply.headers.get('x-prev-page')).toBe('2');
  });

  it('answers an empty page with only first and last beyond the last page', async () => {
    const reply = await get('/projects?per_page=10&page=9');
    expect(list(reply)).toEqual([]);
    expect(Object.keys(links(reply))).toEqual(['first', 'last']);
    expect(reply.headers.get('x-page')).toBe('9');
    expect(reply.headers.get('x-total')).toBe('23');
    expect(reply.headers.get('x-next-page')).toBe('');
    expect(reply.headers.get('x-prev-page')).toBe('');
  });

  it('pages through every item exactly once', async () => {
    const seen: number[] = [];
    for (let page = 1; page <= 3; page++) seen.push(...ids(await get(`/projects?per_page=10&page=${page}`)));
    expect(sorted(seen)).toEqual(ANONYMOUS_VISIBLE);
  });

  it('keeps every query parameter, sorted by name, in Link URLs', async () => {
    const reply = await get('/projects?visibility=public&per_page=5&order_by=id&sort=asc&page=2');
    expect(links(reply).next).toBe(`${sandbox.url}/api/v4/projects?order_by=id&page=3&per_page=5&sort=asc&visibility=public`);
    expect(links(reply).last).toBe(`${sandbox.url}/api/v4/projects?order_by=id&page=5&per_page=5&sort=asc&visibility=public`);
  });

  it('defaults per_page to 20, clamps it to 100 and treats page 0 as page 1', async () => {
    expect((await get('/projects')).headers.get('x-per-page')).toBe('20');
    const clamped = await get('/projects?per_page=500', 'admin-token');
    expect(clamped.headers.get('x-per-page')).toBe('100');
    expect(list(clamped)).toHaveLength(33);
    const zero = await get('/projects?page=0&per_page=5');
    expect(zero.headers.get('x-page')).toBe('1');
    expect(ids(zero)).toEqual(ids(await get('/projects?page=1&per_page=5')));
  });

  it('reports one page for an empty list', async () => {
    const reply = await get('/projects?search=no-such-project');
    expect(list(reply)).toEqual([]);
    expect(reply.headers.get('x-total')).toBe('0');
    expect(reply.headers.get('x-total-pages')).toBe('1');
    expect(Object.keys(links(reply))).toEqual(['first', 'last']);
  });

  it('rejects a non-integer page like Grape does', async () => {
    const reply = await get('/projects?page=abc');
    expect(reply).toMatchObject({ status: 400, body: { error: 'page is invalid' } });
  });

  describe('above 10,000 items', () => {
    let bulk: GitlabSandbox;

    beforeAll(async () => {
      bulk = await startGitlabSandbox({ bulkPublicProjects: 10_050 });
    });

    afterAll(async () => {
      await bulk.close();
    });

    it('omits X-Total, X-Total-Pages and rel=last but still links the next page', async () => {
      const started = Date.now();
      const reply = await get('/projects?per_page=100', undefined, {}, bulk);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(list(reply)).toHaveLength(100);
      expect(reply.headers.has('x-total')).toBe(false);
      expect(reply.headers.has('x-total-pages')).toBe(false);
      expect(Object.keys(links(reply))).toEqual(['next', 'first']);
      expect(reply.headers.get('x-next-page')).toBe('2');
      expect(reply.headers.get('x-prev-page')).toBe('');
    });

    it('ends with an empty X-Next-Page on the final page', async () => {
      // 10,050 bulk + 23 seeded public projects = 10,073 items: page 101 holds the last 73.
      const reply = await get('/projects?per_page=100&page=101', undefined, {}, bulk);
      expect(list(reply)).toHaveLength(73);
      expect(reply.headers.get('x-next-page')).toBe('');
      expect(reply.headers.get('x-prev-page')).toBe('100');
      expect(Object.keys(links(reply))).toEqual(['prev', 'first']);
    });

    it('counts again once a filter brings the list under the limit', async () => {
      const reply = await get('/projects?search=recipes', undefined, {}, bulk);
      expect(reply.headers.get('x-total')).toBe('1');
    });
  });
});

describe('sandbox GitLab project visibility and forms', () => {
  it('shows anonymous callers only public projects, in the simple form', async () => {
    const reply = await get('/projects?per_page=100');
    expect(sorted(ids(reply))).toEqual(ANONYMOUS_VISIBLE);
    for (const project of list(reply)) expect(Object.keys(project).sort()).toEqual(SIMPLE_KEYS);
  });

  it('shows a signed-in user public, internal and member-of private projects in the full form', async () => {
    const reply = await get('/projects?per_page=100', 'demo-token');
    expect(sorted(ids(reply))).toEqual(DEMO_VISIBLE);
    const core = list(reply).find((p) => p.id === 1);
    expect(core).toMatchObject({ visibility: 'public', permissions: { project_access: null, group_access: { access_level: 10, notification_level: 3 } } });
  });

  it('shows alice her private project and the admin everything', async () => {
    expect(ids(await get('/projects?per_page=100', 'alice-token'))).toContain(10);
    // root/admin-scripts has an id past 2^32, as gitlab.com's projects do.
    expect(sorted(ids(await get('/projects?per_page=100', 'admin-token')))).toEqual([...range(1, 12), ...range(14, 33), 4_000_000_013]);
  });

  it('returns the simple form to a signed-in user with simple=true', async () => {
    for (const project of list(await get('/projects?simple=true', 'demo-token'))) expect(Object.keys(project).sort()).toEqual(SIMPLE_KEYS);
  });

  it('sorts by created_at descending by default', async () => {
    const projects = list(await get('/projects?per_page=100', 'demo-token'));
    const times = projects.map((p) => Date.parse(p.created_at as string));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });
});

describe('sandbox GitLab project list filters', () => {
  const demo = (query: string): Promise<Reply> => get(`/projects?per_page=100&${query}`, 'demo-token');

  it('filters by archived', async () => {
    expect(sorted(ids(await demo('archived=true')))).toEqual([4, 9]);
    const unarchived = ids(await demo('archived=false'));
    expect(unarchived).not.toContain(4);
    expect(unarchived).toHaveLength(DEMO_VISIBLE.length - 2);
  });

  it('filters by visibility', async () => {
    expect(sorted(ids(await demo('visibility=private')))).toEqual([2, 6, 8]);
    expect(sorted(ids(await demo('visibility=internal')))).toEqual([3, 9, 12, 31]);
  });

  it.each([
    ['id', (p: Json) => p.id as number],
    ['name', (p: Json) => (p.name as string).toLowerCase()],
    ['path', (p: Json) => (p.path as string).toLowerCase()],
    ['created_at', (p: Json) => p.created_at as string],
    ['updated_at', (p: Json) => p.updated_at as string],
    ['last_activity_at', (p: Json) => p.last_activity_at as string],
  ] as const)('orders by %s in both directions, ties broken by id', async (orderBy, key) => {
    for (const sort of ['asc', 'desc'] as const) {
      const projects = list(await demo(`order_by=${orderBy}&sort=${sort}`));
      const sign = sort === 'asc' ? 1 : -1;
      for (let i = 1; i < projects.length; i++) {
        const a = projects[i - 1] as Json;
        const b = projects[i] as Json;
        const ka = key(a);
        const kb = key(b);
        const inOrder = ka === kb ? sign * ((b.id as number) - (a.id as number)) > 0 : sign * (ka < kb ? -1 : 1) < 0;
        expect(inOrder, `${orderBy} ${sort}: ${String(a.id)} before ${String(b.id)}`).toBe(true);
      }
    }
  });

  it('searches names, paths and descriptions case-insensitively', async () => {
    expect(ids(await demo('search=RECIPES'))).toEqual([11]);
    expect(ids(await demo('search=terraform'))).toEqual([2]);
    expect(sorted(ids(await get('/projects?per_page=100&search=core')))).toEqual(sorted([1, ...PUBLIC_FORKS]));
  });

  it('filters owned projects (personal namespace and owned groups)', async () => {
    expect(sorted(ids(await demo('owned=true')))).toEqual(sorted([5, 6, 7, 8, 9, ...DEMO_FORKS, ...DEMO_GROUP_FORKS]));
  });

  it('filters by membership and min_access_level', async () => {
    const own = [...DEMO_FORKS, ...DEMO_GROUP_FORKS];
    expect(sorted(ids(await demo('membership=true')))).toEqual(sorted([1, 2, 3, 4, 5, 6, 7, 8, 9, ...own]));
    expect(sorted(ids(await demo('min_access_level=30')))).toEqual(sorted([1, 4, 5, 6, 7, 8, 9, ...own]));
    expect(sorted(ids(await demo('min_access_level=50')))).toEqual(sorted([5, 6, 7, 8, 9, ...own]));
    expect(sorted(ids(await get('/projects?per_page=100&min_access_level=30', 'alice-token')))).toEqual(sorted([1, 2, 3, 4, 6, 10, 11, 15, 20, 25, 30]));
  });

  it("filters the caller's starred projects", async () => {
    expect(sorted(ids(await demo('starred=true')))).toEqual([1, 5, 11]);
    expect(ids(await get('/projects?starred=true'))).toEqual([]);
  });

  it('includes statistics with statistics=true where the caller is Reporter or more', async () => {
    const projects = list(await demo('statistics=true'));
    const core = projects.find((p) => p.id === 1);
    expect(core?.statistics).toMatchObject({ commit_count: 1234, repository_size: expect.any(Number), storage_size: expect.any(Number) });
    // demo is only a Guest of platform/infra: GitLab's read_statistics needs Reporter.
    expect(projects.find((p) => p.id === 2)).not.toHaveProperty('statistics');
    expect(list(await demo(''))[0]).not.toHaveProperty('statistics');
  });

  it('adds custom attributes for admins only', async () => {
    const admin = list(await get('/projects?with_custom_attributes=true&per_page=100', 'admin-token'));
    expect(admin.find((p) => p.id === 1)?.custom_attributes).toEqual([{ key: 'tier', value: 'gold' }]);
    expect(list(await demo('with_custom_attributes=true'))[0]).not.toHaveProperty('custom_attributes');
    expect(ids(await get('/projects?custom_attributes[tier]=gold', 'admin-token'))).toEqual([1]);
  });

  it('filters by issues and merge requests enabled', async () => {
    const issues = ids(await demo('with_issues_enabled=true'));
    expect(issues).not.toContain(2);
    expect(issues).not.toContain(12);
    expect(issues).toHaveLength(DEMO_VISIBLE.length - 2);
    const mrs = ids(await demo('with_merge_requests_enabled=true'));
    expect(mrs.filter((id) => [3, 7, 12].includes(id))).toEqual([]);
    expect(mrs).toHaveLength(DEMO_VISIBLE.length - 3);
  });

  it('filters by programming language, case-insensitively', async () => {
    expect(sorted(ids(await demo('with_programming_language=ruby')))).toEqual(sorted([1, ...FORKS.filter((id) => id !== 30)]));
    expect(sorted(ids(await demo('with_programming_language=Python')))).toEqual([6, 11]);
  });

  it('filters by id_after and id_before', async () => {
    expect(sorted(ids(await demo('id_after=20&id_before=25')))).toEqual([21, 22, 23, 24]);
  });

  it.each([
    ['order_by=bogus', 'order_by does not have a valid value'],
    ['visibility=secret', 'visibility does not have a valid value'],
    ['sort=up', 'sort does not have a valid value'],
    ['min_access_level=25', 'min_access_level does not have a valid value'],
    ['archived=maybe', 'archived is invalid'],
    ['order_by=bogus&sort=up', 'order_by does not have a valid value, sort does not have a valid value'],
  ])('rejects %s with 400', async (query, error) => {
    const reply = await demo(query);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ error });
    expect(reply.headers.get('content-type')).toBe('application/json');
  });
});

describe('sandbox GitLab single project', () => {
  it('finds a project by id and by URL-encoded path', async () => {
    const byId = await get('/projects/1', 'demo-token');
    const byPath = await get('/projects/platform%2Fcore', 'demo-token');
    expect(byId.status).toBe(200);
    expect(byPath.body).toEqual(byId.body);
    expect((await get('/projects/platform%2Ftools%2Fcli')).body).toMatchObject({ id: 4, archived: true });
  });

  it('serves public projects to anonymous callers without permissions and 404s the rest', async () => {
    const reply = await get('/projects/1');
    expect(reply.body).toMatchObject({ id: 1, path_with_namespace: 'platform/core', forks_count: 20, star_count: 3 });
    expect(reply.body).not.toHaveProperty('permissions');
    expect(await get('/projects/2')).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
  });

  it("hides alice's private project from demo but not from alice", async () => {
    expect(await get('/projects/alice%2Fsecret-notes', 'demo-token')).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    expect((await get('/projects/10', 'alice-token')).status).toBe(200);
    expect(await get('/projects/99999', 'admin-token')).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
  });

  it('includes license and license_url only with license=true, as BasicProjectDetails exposes them', async () => {
    const plain = (await get('/projects/1', 'demo-token')).body as Json;
    expect(plain).not.toHaveProperty('license_url');
    expect(plain).not.toHaveProperty('license');
    const withLicense = (await get('/projects/1?license=true', 'demo-token')).body as Json;
    expect(withLicense.license_url).toBe('http://gitlab.sandbox.test/platform/core/-/blob/main/LICENSE');
    expect(withLicense.license).toEqual({
      key: 'mit',
      name: 'MIT License',
      nickname: null,
      html_url: 'https://choosealicense.com/licenses/mit/',
      source_url: 'https://opensource.org/licenses/MIT',
    });
    expect(((await get('/projects/7?license=true', 'demo-token')).body as Json).license).toBeNull();
  });

  it('includes statistics only with statistics=true', async () => {
    expect((await get('/projects/1', 'demo-token')).body).not.toHaveProperty('statistics');
    expect(((await get('/projects/1?statistics=true', 'demo-token')).body as Json).statistics).toEqual({
      commit_count: 1234,
      storage_size: 154_729 + 2_048,
      repository_size: 154_729,
      wiki_size: 0,
      lfs_objects_size: 0,
      job_artifacts_size: 2_048,
      pipeline_artifacts_size: 0,
      packages_size: 0,
      snippets_size: 0,
      uploads_size: 0,
      container_registry_size: 0,
    });
  });

  it('reports permissions relative to the caller', async () => {
    expect(((await get('/projects/1', 'demo-token')).body as Json).permissions).toEqual({
      project_access: null,
      group_access: { access_level: 10, notification_level: 3 },
    });
    expect(((await get('/projects/7', 'demo-token')).body as Json).permissions).toEqual({
      project_access: { access_level: 50, notification_level: 3 },
      group_access: null,
    });
    expect(((await get('/projects/1', 'alice-token')).body as Json).permissions).toEqual({
      project_access: null,
      group_access: { access_level: 50, notification_level: 3 },
    });
    expect(((await get('/projects/1', 'admin-token')).body as Json).permissions).toEqual({ project_access: null, group_access: null });
  });

  it('shows runners_token to Maintainers and admins only', async () => {
    expect((await get('/projects/1', 'alice-token')).body).toHaveProperty('runners_token', expect.stringMatching(/^[0-9a-f]{30}$/));
    expect((await get('/projects/1', 'admin-token')).body).toHaveProperty('runners_token');
    expect((await get('/projects/1', 'demo-token')).body).not.toHaveProperty('runners_token');
    expect((await get('/projects/1')).body).not.toHaveProperty('runners_token');
  });

  it('shows forked_from_project to authenticated callers only', async () => {
    const fork = (await get('/projects/demo%2Fcore-fork-1', 'demo-token')).body as Json;
    expect(fork.id).toBe(14);
    expect(fork.forked_from_project).toMatchObject({ id: 1, path_with_namespace: 'platform/core', namespace: { id: 7, parent_id: null } });
    expect((await get('/projects/14')).body).not.toHaveProperty('forked_from_project');
    expect((await get('/projects/1', 'demo-token')).body).not.toHaveProperty('forked_from_project');
  });

  it('shows owner for projects in a personal namespace only', async () => {
    expect(((await get('/projects/7', 'demo-token')).body as Json).owner).toMatchObject({
      id: 2,
      name: 'Demo User',
      username: 'demo',
      created_at: '2022-02-01T09:00:00.000Z',
    });
    expect((await get('/projects/1', 'demo-token')).body).not.toHaveProperty('owner');
  });

  it("has every field of the spec's full form, with the spec's JSON types", async () => {
    // GitLab's fixtures have no schema of the full form. An admin reading a licensed fork in a
    // personal namespace with statistics and license gets every conditional field at once.
    const project = (await get('/projects/14?statistics=true&license=true', 'admin-token')).body as Json;
    const types: Record<string, string[]> = {
      integer: ['id', 'creator_id', 'forks_count', 'star_count', 'open_issues_count', 'approvals_before_merge'],
      stringOrNull: ['description', 'avatar_url', 'import_error'],
      string: [
        'default_branch',
        'readme_url',
        'web_url',
        'ssh_url_to_repo',
        'http_url_to_repo',
        'name',
        'name_with_namespace',
        'path',
        'path_with_namespace',
        'license_url',
        'repository_storage',
        'import_status',
        'runners_token',
      ],
      boolean: [
        'issues_enabled',
        'merge_requests_enabled',
        'jobs_enabled',
        'wiki_enabled',
        'snippets_enabled',
        'resolve_outdated_diff_discussions',
        'container_registry_enabled',
        'archived',
        'shared_runners_enabled',
        'public_jobs',
        'only_allow_merge_if_pipeline_succeeds',
        'only_allow_merge_if_all_discussions_are_resolved',
        // The spec's printing_merge_requests_link_enabled is a doc typo: GitLab's entity exposes the singular name.
        'printing_merge_request_link_enabled',
        'request_access_enabled',
      ],
      timestamp: ['created_at', 'last_activity_at'],
    };
    for (const key of types.integer ?? []) expect(Number.isInteger(project[key]), key).toBe(true);
    for (const key of types.stringOrNull ?? []) expect(project[key] === null || typeof project[key] === 'string', key).toBe(true);
    for (const key of types.string ?? []) expect(typeof project[key], key).toBe('string');
    for (const key of types.boolean ?? []) expect(typeof project[key], key).toBe('boolean');
    for (const key of types.timestamp ?? []) expect(project[key], key).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(project.visibility).toBe('public');
    expect(project.merge_method).toBe('merge');
    expect(project.tag_list).toEqual(['ruby', 'platform']);
    expect(project.owner).toMatchObject({ id: 2, name: 'Demo User', created_at: expect.any(String) });
    expect(project.namespace).toEqual({
      id: 2,
      name: 'Demo User',
      path: 'demo',
      kind: 'user',
      full_path: 'demo',
      parent_id: null,
      avatar_url: null,
      web_url: 'http://gitlab.sandbox.test/demo',
    });
    expect(project.permissions).toEqual({ project_access: null, group_access: null });
    expect(project.shared_with_groups).toEqual([]);
    expect(Object.keys(project.statistics as Json)).toEqual(
      expect.arrayContaining(['commit_count', 'storage_size', 'repository_size', 'lfs_objects_size', 'job_artifacts_size']),
    );
    expect(Object.keys(project.license as Json).sort()).toEqual(['html_url', 'key', 'name', 'nickname', 'source_url']);
    expect(project._links).toEqual({
      self: `${sandbox.url}/api/v4/projects/14`,
      issues: `${sandbox.url}/api/v4/projects/14/issues`,
      merge_requests: `${sandbox.url}/api/v4/projects/14/merge_requests`,
      repo_branches: `${sandbox.url}/api/v4/projects/14/repository/branches`,
      labels: `${sandbox.url}/api/v4/projects/14/labels`,
      events: `${sandbox.url}/api/v4/projects/14/events`,
      members: `${sandbox.url}/api/v4/projects/14/members`,
      cluster_agents: `${sandbox.url}/api/v4/projects/14/cluster_agents`,
    });
    expect(Object.keys(project.forked_from_project as Json).sort()).toEqual([...SIMPLE_KEYS, 'license', 'license_url'].sort());
    const shared = ((await get('/projects/6', 'demo-token')).body as Json).shared_with_groups;
    expect(shared).toEqual([{ group_id: 7, group_name: 'Platform', group_full_path: 'platform', group_access_level: 20, expires_at: '2030-12-31' }]);
  });
});

describe('sandbox GitLab project sub-resources', () => {
  it('lists project users with their state, and searches them', async () => {
    const users = list(await get('/projects/1/users'));
    expect(users.map((u) => u.username)).toEqual(['demo', 'alice', 'bob', 'carol']);
    expect(users[3]).toMatchObject({ id: 5, name: 'Carol Danvers', state: 'blocked', web_url: 'http://gitlab.sandbox.test/carol' });
    for (const user of users) expect(Object.keys(user).sort()).toEqual(['avatar_url', 'id', 'locked', 'name', 'state', 'username', 'web_url']);
    expect(list(await get('/projects/1/users?search=ALI')).map((u) => u.id)).toEqual([3]);
    expect((await get('/projects/10/users', 'demo-token')).status).toBe(404);
  });

  it('lists the forks the caller can see as ProjectWithAccess records, with their parent', async () => {
    const anonymous = await get('/projects/1/forks?per_page=100');
    expect(sorted(ids(anonymous))).toEqual(PUBLIC_FORKS);
    const demo = await get('/projects/platform%2Fcore/forks?per_page=100&statistics=true', 'demo-token');
    expect(demo.headers.get('x-total')).toBe('19');
    for (const fork of list(demo)) {
      // Current GitLab presents forks as it presents /projects (present_projects): owner, permissions, statistics.
      expect(fork).toHaveProperty('permissions');
      expect(fork).not.toHaveProperty('license_url');
      expect(fork).toHaveProperty('_links');
      expect(fork.forked_from_project).toMatchObject({ id: 1, name: 'Core', path_with_namespace: 'platform/core' });
    }
    expect(ids(await get('/projects/1/forks?per_page=100', 'alice-token'))).toHaveLength(20);
    expect(sorted(ids(await get('/projects/1/forks?visibility=internal', 'demo-token')))).toEqual([31]);
    expect(ids(await get('/projects/7/forks', 'demo-token'))).toEqual([]);
    expect(await get('/projects/10/forks', 'demo-token')).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
  });

  it('reports language percentages', async () => {
    expect((await get('/projects/1/languages')).body).toEqual({ Ruby: 66.69, JavaScript: 22.98, HTML: 7.91, CoffeeScript: 2.42 });
    expect(await get('/projects/10/languages', 'demo-token')).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
  });

  it("lists a user's personal projects by id or username", async () => {
    expect(sorted(ids(await get('/users/demo/projects?per_page=100')))).toEqual([7, 14, 19, 24, 29]);
    expect(sorted(ids(await get('/users/2/projects?per_page=100', 'demo-token')))).toEqual([7, 8, 9, 14, 19, 24, 29]);
    expect(sorted(ids(await get('/users/alice/projects?per_page=100', 'demo-token')))).toEqual([11, 15, 20, 25]);
    expect(ids(await get('/users/alice/projects?archived=true', 'demo-token'))).toEqual([]);
    expect(await get('/users/nobody/projects')).toMatchObject({ status: 404, body: { message: '404 User Not Found' } });
  });
});

describe('sandbox GitLab authentication', () => {
  it.each([
    ['Private-Token header', { 'Private-Token': 'demo-token' }, ''],
    ['Authorization: Bearer', { Authorization: 'Bearer demo-token' }, ''],
    ['private_token query', {}, '?private_token=demo-token'],
    ['access_token query', {}, '?access_token=demo-token'],
  ])('accepts a token as %s', async (_how, headers, query) => {
    const reply = await get(`/projects/8${query}`, undefined, headers);
    expect(reply.status).toBe(200);
    expect(reply.body).toHaveProperty('permissions');
  });

  it.each([
    ['/projects/1', { 'Private-Token': 'wrong' }],
    ['/projects', { Authorization: 'Bearer wrong' }],
    ['/projects?private_token=wrong', {}],
    ['/no/such/route', { 'Private-Token': 'wrong' }],
  ])('answers an invalid token with 401 on %s', async (path, headers) => {
    const reply = await get(path, undefined, headers);
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual({ message: '401 Unauthorized' });
  });

  it('lets an admin token with the sudo scope act as another user', async () => {
    const asAlice = await get('/projects/10', 'admin-token', { Sudo: 'ALICE' });
    expect(asAlice.status).toBe(200);
    expect((asAlice.body as Json).permissions).toEqual({ project_access: { access_level: 50, notification_level: 3 }, group_access: null });
    expect(await get('/projects/10?sudo=2', 'admin-token')).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
  });

  it('refuses sudo from a non-admin', async () => {
    const reply = await get('/projects', 'demo-token', { Sudo: 'alice' });
    expect(reply).toMatchObject({ status: 403, body: { message: '403 Forbidden - Must be admin to use sudo' } });
  });

  it('refuses sudo from an admin token without the sudo scope', async () => {
    const reply = await get('/projects', 'admin-nosudo-token', { Sudo: 'alice' });
    expect(reply.status).toBe(403);
    expect(reply.body).toEqual({
      error: 'insufficient_scope',
      error_description: 'The request requires higher privileges than provided by the access token.',
      scope: 'sudo',
    });
  });

  it('answers sudo to an unknown user with 404 naming it, and anonymous sudo with 401', async () => {
    expect(await get('/projects?sudo=nobody', 'admin-token')).toMatchObject({
      status: 404,
      body: { message: "404 User with ID or username 'nobody' Not Found" },
    });
    expect(await get('/projects', undefined, { Sudo: 'alice' })).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
  });

  it('exports the demo users with their tokens', () => {
    expect(DEMO_USERS.map((u) => [u.id, u.username, u.token, u.admin])).toEqual([
      [1, 'root', 'admin-token', true],
      [2, 'demo', 'demo-token', false],
      [3, 'alice', 'alice-token', false],
      [4, 'bob', 'bob-token', false],
    ]);
  });
});

describe('sandbox GitLab errors', () => {
  it('answers unknown routes with 404 {"error":"404 Not Found"}', async () => {
    for (const path of ['/nothing', '/projects/1/nothing', '/projects/platform/core']) {
      expect(await get(path)).toMatchObject({ status: 404, body: { error: '404 Not Found' } });
    }
    const outside = await fetch(`${sandbox.url}/elsewhere`);
    expect(outside.status).toBe(404);
    expect(await outside.json()).toEqual({ error: '404 Not Found' });
  });

  it('answers another method on a known path with 405', async () => {
    const reply = await fetch(`${sandbox.url}/api/v4/projects/1/languages`, { method: 'DELETE' });
    expect(reply.status).toBe(405);
    expect(await reply.json()).toEqual({ error: '405 Not Allowed' });
  });

  it('sends JSON with timestamps in milliseconds and Z', async () => {
    const reply = await get('/projects/1');
    expect(reply.headers.get('content-type')).toBe('application/json');
    expect((reply.body as Json).created_at).toBe('2023-01-10T09:00:00.000Z');
  });
});

describe('sandbox GitLab faults, latency and recording', () => {
  it('answers with an injected status and body, for `times` requests only', async () => {
    sandbox.addFault({ method: 'GET', path: '/api/v4/projects/1', status: 503, body: '{"message":"down"}', times: 1 });
    expect(await get('/projects/1')).toMatchObject({ status: 503, body: { message: 'down' } });
    expect((await get('/projects/1')).status).toBe(200);
  });

  it('matches faults by RegExp and method, with a default 500 body and custom headers', async () => {
    sandbox.addFault({ method: 'GET', path: /\/forks$/, status: 429, headers: { 'Retry-After': '7' } });
    sandbox.addFault({ method: 'POST', path: /./, status: 418 });
    const reply = await get('/projects/1/forks');
    expect(reply).toMatchObject({ status: 429, body: { message: '429 Too Many Requests' } });
    expect(reply.headers.get('retry-after')).toBe('7');
    expect((await get('/projects/1/languages')).status).toBe(200);
    sandbox.clearFaults();
    sandbox.addFault({ status: 500 });
    expect(await get('/projects/1')).toMatchObject({ status: 500, body: { message: '500 Internal Server Error' } });
  });

  it('hangs until the client gives up', async () => {
    sandbox.addFault({ path: '/api/v4/projects/5', hang: true });
    await expect(fetch(`${sandbox.url}/api/v4/projects/5`, { signal: AbortSignal.timeout(200) })).rejects.toThrow(/abort|timeout/i);
  });

  it('resets the connection', async () => {
    sandbox.addFault({ path: '/api/v4/projects/5', reset: true, times: 1 });
    await expect(fetch(`${sandbox.url}/api/v4/projects/5`)).rejects.toThrow(TypeError);
    expect((await get('/projects/5')).status).toBe(200);
  });

  it('delays matching requests and adds global latency', async () => {
    sandbox.addFault({ path: '/api/v4/projects/5', delayMs: 150, times: 1 });
    let started = Date.now();
    expect((await get('/projects/5')).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    sandbox.setLatency(120);
    started = Date.now();
    expect((await get('/projects/5')).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
  });

  it('records every request, including faulted, 401 and 404 ones', async () => {
    sandbox.clearRequests();
    sandbox.addFault({ path: '/api/v4/projects/7', status: 502, times: 1 });
    await get('/projects/7');
    await get('/projects/platform%2Fcore?statistics=true&scope[]=a&scope[]=b', 'demo-token', { Sudo: 'x', 'X-Custom': 'yes' });
    await get('/projects', 'wrong');
    await get('/nope');
    expect(sandbox.requests.map((r) => [r.method, r.path])).toEqual([
      ['GET', '/api/v4/projects/7'],
      ['GET', '/api/v4/projects/platform%2Fcore'],
      ['GET', '/api/v4/projects'],
      ['GET', '/api/v4/nope'],
    ]);
    const second = sandbox.requests[1];
    expect(second?.query).toEqual({ statistics: ['true'], 'scope[]': ['a', 'b'] });
    expect(second?.headers).toMatchObject({ 'private-token': 'demo-token', sudo: 'x', 'x-custom': 'yes' });
    sandbox.clearRequests();
    expect(sandbox.requests).toEqual([]);
  });

  it('gives every sandbox its own state', async () => {
    const other = await startGitlabSandbox();
    try {
      other.addFault({ status: 500 });
      expect(other.url).not.toBe(sandbox.url);
      expect((await get('/projects/1')).status).toBe(200);
      expect((await get('/projects/1', undefined, {}, other)).status).toBe(500);
      expect(other.requests).toHaveLength(1);
    } finally {
      await other.close();
    }
  });
});

describe("sandbox GitLab responses against GitLab's JSON Schemas", () => {
  // reference/ is a sibling of the repository: /work/shared next to /work/main.
  const schemaDir = new URL('../fixtures/gitlab-schemas/', import.meta.url);
  const readSchema = (name: string): Json => JSON.parse(readFileSync(fileURLToPath(new URL(name, schemaDir)), 'utf8')) as Json;

  // ajv and ajv-formats are CommonJS with `exports.default`; under ESM the default import is the module object.
  type AjvClass = typeof AjvModule.default;
  const Ajv = ((AjvModule as unknown as { default?: AjvClass }).default ?? AjvModule) as AjvClass;
  type AddFormats = typeof addFormatsModule.default;
  const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as AddFormats;

  function validator(schema: Json) {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    return ajv.compile(schema);
  }

  /** Replaces the non-standard `{"type":"date"}` of old GitLab fixtures with a date-time string. */
  function withStandardDates(node: unknown): unknown {
    if (Array.isArray(node)) return node.map(withStandardDates);
    if (node && typeof node === 'object') {
      const object = node as Json;
      if (object.type === 'date') return { ...object, type: 'string', format: 'date-time' };
      return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, withStandardDates(v)]));
    }
    return node;
  }

  it('matches public_api/v4/project.json for every anonymous list item', async () => {
    const validate = validator(readSchema('public_api/v4/project.json'));
    const items = list(await get('/projects?per_page=100'));
    expect(items.length).toBeGreaterThan(0);
    for (const item of items) expect(validate(item) ? [] : validate.errors, `project ${String(item.id)}`).toEqual([]);
    // The validator is strict: one extra key (as the full form has) fails it.
    expect(validate({ ...items[0], visibility: 'public' })).toBe(false);
  });

  it('matches public_api/v4/project.json for simple=true items of a signed-in user and the fork list', async () => {
    const validate = validator(readSchema('public_api/v4/project.json'));
    const items = [...list(await get('/projects?simple=true&per_page=100', 'alice-token')), ...list(await get('/projects/1/forks?per_page=100'))];
    for (const item of items) expect(validate(item) ? [] : validate.errors, `project ${String(item.id)}`).toEqual([]);
  });

  it('matches public_api/v4/projects.json, apart from the keys newer GitLab added', async () => {
    const raw = readSchema('public_api/v4/projects.json');
    // This stored projects.json is old: it types dates as the non-standard "date" (standard validators
    // throw UnknownType; GitLab's matcher accepted ISO strings) and, with additionalProperties false,
    // predates topics, readme_url and namespace, which current GitLab returns and project.json requires.
    // So: dates become date-time strings, additional properties are allowed, and the extra keys are
    // checked to be exactly what project.json adds over projects.json.
    const schema = withStandardDates(raw) as Json;
    const itemSchema = schema.items as Json;
    const validate = validator({ ...schema, items: { ...itemSchema, additionalProperties: true } });
    const body = list(await get('/projects?per_page=100'));
    expect(validate(body) ? [] : validate.errors).toEqual([]);

    const oldKeys = Object.keys(itemSchema.properties as Json);
    const newKeys = Object.keys(readSchema('public_api/v4/project.json').properties as Json);
    const added = newKeys.filter((k) => !oldKeys.includes(k)).sort();
    expect(added).toEqual(['namespace', 'readme_url', 'topics']);
    for (const item of body)
      expect(
        Object.keys(item)
          .filter((k) => !oldKeys.includes(k))
          .sort(),
      ).toEqual(added);
  });
});
