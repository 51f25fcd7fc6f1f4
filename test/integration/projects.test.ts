import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/upstreams/pagination.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(async () => {
  await t.close();
});

interface ProjectNode {
  id: string;
  restId: number;
  pathWithNamespace: string;
  [key: string]: unknown;
}

describe('Query.project', () => {
  it('finds a project by full path, sending the path as one encoded segment', async () => {
    t.resetCalls();
    const res = await t.gql<{ project: ProjectNode }>(
      `{ project(fullPath: "platform/core") { id restId name pathWithNamespace visibility namespace { fullPath kind } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.project).toMatchObject({ pathWithNamespace: 'platform/core', visibility: 'PUBLIC', namespace: { fullPath: 'platform' } });
    expect(res.data?.project.id).toBe(`gid://duograph/Project/${res.data?.project.restId}`);
    expect(t.calls().map((c) => `${c.method} ${c.path}`)).toEqual(['GET /api/v4/projects/platform%2Fcore']);
  });

  it('finds a project by global id, by numeric id and through node/nodes', async () => {
    const core = await t.gql<{ project: ProjectNode }>(`{ project(fullPath: "platform/core") { id restId } }`);
    const { id, restId } = core.data?.project ?? { id: '', restId: 0 };
    const res = await t.gql<Record<string, { pathWithNamespace: string } | null>>(
      `query($id: ID!, $rest: ID!) {
        byGid: project(id: $id) { pathWithNamespace }
        byRest: project(id: $rest) { pathWithNamespace }
        node(id: $id) { id ... on Project { pathWithNamespace } }
      }`,
      { id, rest: String(restId) },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.byGid?.pathWithNamespace).toBe('platform/core');
    expect(res.data?.byRest?.pathWithNamespace).toBe('platform/core');
    expect(res.data?.node?.pathWithNamespace).toBe('platform/core');
    const nodes = await t.gql<{ nodes: (ProjectNode | null)[] }>(`query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Project { pathWithNamespace } } }`, {
      ids: [id, 'gid://duograph/Project/999999'],
    });
    expect(nodes.data?.nodes).toEqual([{ id, pathWithNamespace: 'platform/core' }, null]);
  });

  it('refuses a global id of a type the graph does not have with a code, without calling an upstream', async () => {
    t.resetCalls();
    const res = await t.gql(`{ node(id: "gid://duograph/Foo/1") { id } }`);
    // Decoded with the arguments, as a malformed id is: the request is refused whole.
    expect(res.status).toBe(400);
    expect(res.data).toBeUndefined();
    expect(res.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', field: ['id'] });
    expect(res.errors?.[0]?.message).toMatch(/Foo/);
    expect(t.calls()).toEqual([]);
  });

  it('returns null for a project that does not exist or that the caller cannot see', async () => {
    const res = await t.gql(`{ missing: project(fullPath: "nope/nothing") { id } private: project(fullPath: "alice/secret-notes") { id } }`);
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ missing: null, private: null });
    const alice = await t.gql<{ project: ProjectNode | null }>(
      `{ project(fullPath: "alice/secret-notes") { pathWithNamespace } }`,
      {},
      { token: 'alice-token' },
    );
    expect(alice.data?.project?.pathWithNamespace).toBe('alice/secret-notes');
  });

  it('refuses both or neither of id and fullPath without calling GitLab', async () => {
    t.resetCalls();
    const res = await t.gql(`{ a: project(id: "1", fullPath: "x/y") { id } b: project { id } c: project(id: "gid://duograph/Job/1/2") { id } }`);
    expect(res.data).toEqual({ a: null, b: null, c: null });
    expect(res.errors?.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT', 'BAD_USER_INPUT', 'BAD_USER_INPUT']);
    expect(t.calls()).toHaveLength(0);
  });

  it('keeps ids that look like paths inside the API path', async () => {
    t.resetCalls();
    const res = await t.gql(`{ project(fullPath: "../../users") { id } }`);
    expect(res.data).toEqual({ project: null });
    expect(t.calls().map((c) => c.path)).toEqual(['/api/v4/projects/..%2F..%2Fusers']);
  });

  it('exposes every field of the full project record', async () => {
    const res = await t.gql<{ project: Record<string, unknown> }>(`{
      project(fullPath: "platform/core") {
        restId name nameWithNamespace path pathWithNamespace description defaultBranch visibility
        sshUrlToRepo httpUrlToRepo webUrl readmeUrl avatarUrl tagList topics createdAt lastActivityAt
        forksCount starCount openIssuesCount approvalsBeforeMerge creatorId importStatus importError
        licenseUrl mergeMethod archived issuesEnabled mergeRequestsEnabled jobsEnabled wikiEnabled
        snippetsEnabled resolveOutdatedDiffDiscussions containerRegistryEnabled sharedRunnersEnabled
        publicJobs onlyAllowMergeIfPipelineSucceeds onlyAllowMergeIfAllDiscussionsAreResolved
        printingMergeRequestLinkEnabled requestAccessEnabled
        owner { restId name }
        permissions { projectAccess { accessLevel role notificationLevel } groupAccess { accessLevel role } }
        sharedWithGroups { groupId groupName groupFullPath groupAccessLevel groupRole }
        links { self issues mergeRequests repoBranches labels events members }
        languages { name percentage }
      }
    }`);
    expect(res.errors).toBeUndefined();
    const p = res.data?.project ?? {};
    expect(p.forksCount).toBe(20);
    expect(typeof p.createdAt).toBe('string');
    expect(String(p.createdAt)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(['MERGE', 'REBASE_MERGE', 'FF']).toContain(p.mergeMethod);
    for (const key of ['issuesEnabled', 'archived', 'jobsEnabled', 'sharedRunnersEnabled', 'printingMergeRequestLinkEnabled'])
      expect(typeof p[key]).toBe('boolean');
    expect(p.links).toMatchObject({ self: expect.stringContaining('/api/v4/projects/') });
    expect(Array.isArray(p.languages)).toBe(true);
  });

  it('shows statistics and license only when selected, asking GitLab for them in the same call', async () => {
    t.resetCalls();
    const plain = await t.gql(`{ project(fullPath: "platform/core") { name } }`);
    expect(plain.errors).toBeUndefined();
    expect(t.calls()[0]?.query).toEqual({});
    t.resetCalls();
    const res = await t.gql<{ project: { statistics: Record<string, number>; license: { key: string } | null } }>(
      `{ project(fullPath: "platform/core") { name statistics { commitCount storageSize repositorySize lfsObjectsSize jobArtifactsSize } license { key name } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(t.calls()).toHaveLength(1);
    expect(t.calls()[0]?.query).toEqual({ statistics: ['true'], license: ['true'] });
    expect(typeof res.data?.project.statistics.commitCount).toBe('number');
  });

  it('loads the same project once however often a query asks for it', async () => {
    t.resetCalls();
    const counted = t.app.gitlab.calls;
    const res = await t.gql(`{
      a: project(fullPath: "platform/core") { name }
      b: project(fullPath: "platform/core") { description }
      c: project(fullPath: "platform/core") { starCount }
    }`);
    expect(res.errors).toBeUndefined();
    expect(t.calls()).toHaveLength(1);
    // The gateway's own counter agrees with what the sandbox saw.
    expect(t.app.gitlab.calls - counted).toBe(1);
  });
});

describe('Query.projects', () => {
  it('lists projects with a connection and passes every filter to GitLab', async () => {
    t.resetCalls();
    const res = await t.gql<{ projects: { totalCount: number; nodes: ProjectNode[] } }>(`{
      projects(first: 5, archived: false, visibility: PUBLIC, orderBy: NAME, sort: ASC, search: "core",
        owned: false, membership: false, starred: false, withIssuesEnabled: true, withMergeRequestsEnabled: true,
        withProgrammingLanguage: "Go", minAccessLevel: GUEST, wikiChecksumFailed: false, repositoryChecksumFailed: false,
        customAttributes: [{ key: "team", value: "core" }]) {
        totalCount nodes { pathWithNamespace }
      }
    }`);
    expect(res.errors).toBeUndefined();
    expect(t.calls()).toHaveLength(1);
    expect(t.calls()[0]?.query).toEqual({
      archived: ['false'],
      visibility: ['public'],
      order_by: ['name'],
      sort: ['asc'],
      search: ['core'],
      owned: ['false'],
      membership: ['false'],
      starred: ['false'],
      with_issues_enabled: ['true'],
      with_merge_requests_enabled: ['true'],
      with_programming_language: ['Go'],
      min_access_level: ['10'],
      wiki_checksum_failed: ['false'],
      repository_checksum_failed: ['false'],
      'custom_attributes[team]': ['core'],
      page: ['1'],
      per_page: ['5'],
      simple: ['true'],
    });
  });

  it('answers list fields from the list response without further calls', async () => {
    t.resetCalls();
    const res = await t.gql<{ projects: { nodes: Record<string, unknown>[] } }>(`{
      projects(first: 20) { nodes { name pathWithNamespace visibility description starCount forksCount archived owner { name } namespace { fullPath } permissions { projectAccess { accessLevel } } links { self } } }
    }`);
    expect(res.errors).toBeUndefined();
    expect(res.data?.projects.nodes.length).toBe(20);
    expect(t.calls()).toHaveLength(1);
    expect(t.calls()[0]?.query.statistics).toBeUndefined();
  });

  it('asks for statistics on the list call only when they are selected', async () => {
    t.resetCalls();
    const res = await t.gql<{ projects: { edges: { node: { statistics: { commitCount: number } | null } }[] } }>(
      `{ projects(first: 3) { edges { node { statistics { commitCount } } } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(t.calls()).toHaveLength(1);
    expect(t.calls()[0]?.query.statistics).toEqual(['true']);
    // GitLab shows statistics to Reporters and above; demo is one on some of these projects.
    expect(res.data?.projects.edges.some((e) => typeof e.node.statistics?.commitCount === 'number')).toBe(true);
  });

  it('asks for the simple form when every selected field is in it, and the full form otherwise', async () => {
    const listCall = async (selection: string, fragments = '') => {
      t.resetCalls();
      const res = await t.gql<{ projects: { nodes: Record<string, unknown>[] } }>(
        `{ projects(first: 3, orderBy: ID, sort: ASC) { ${selection} } } ${fragments}`,
      );
      expect(res.errors).toBeUndefined();
      return { data: res.data?.projects.nodes ?? [], calls: t.calls() };
    };
    // Through nodes, edges.node and fragments alike; fields that need only the id (languages) do not need the full form.
    const simple = await listCall(
      'nodes { id name pathWithNamespace namespace { fullPath } ...More languages { name } } edges { cursor node { webUrl } }',
      'fragment More on Project { starCount lastActivityAt }',
    );
    expect(simple.calls[0]?.query.simple).toEqual(['true']);
    expect(simple.calls.filter((c) => c.path === '/api/v4/projects')).toHaveLength(1);
    expect(simple.data[0]).toMatchObject({ name: expect.any(String), namespace: { fullPath: expect.any(String) }, starCount: expect.any(Number) });

    const full = await listCall('nodes { name ... on Project { visibility } }');
    expect(full.calls).toHaveLength(1);
    expect(full.calls[0]?.query.simple).toBeUndefined();
    expect(full.data[0]?.visibility).toEqual(expect.any(String));
  });

  it('serves a later lookup of a listed project from the primed loader', async () => {
    t.resetCalls();
    const list = await t.gql<{ projects: { nodes: ProjectNode[] } }>(`{ projects(first: 1, orderBy: ID, sort: ASC) { nodes { restId } } }`);
    const restId = list.data?.projects.nodes[0]?.restId;
    t.resetCalls();
    // visibility is not in the simple form: the list comes in full form, and full-form records prime the loader.
    const res = await t.gql(`query($id: ID!) { projects(first: 1, orderBy: ID, sort: ASC) { nodes { name visibility } } project(id: $id) { name } }`, {
      id: String(restId),
    });
    expect(res.errors).toBeUndefined();
    // The list and the lookup start together; DataLoader batches the lookup after the list primes it.
    expect(t.calls().length).toBeLessThanOrEqual(2);
  });

  it('shows anonymous callers public projects only, in simple form', async () => {
    const res = await t.gql<{ projects: { totalCount: number; nodes: { visibility: string | null; owner: unknown; pathWithNamespace: string }[] } }>(
      `{ projects(first: 100) { totalCount nodes { pathWithNamespace visibility owner { name } } } }`,
      {},
      { token: null },
    );
    expect(res.errors).toBeUndefined();
    const nodes = res.data?.projects.nodes ?? [];
    expect(nodes.length).toBeGreaterThan(0);
    // The simple form has neither visibility nor owner; anonymous callers get no extra calls for them.
    expect(nodes.every((n) => n.visibility === null && n.owner === null)).toBe(true);
    const demo = await t.gql<{ projects: { totalCount: number } }>(`{ projects(first: 1) { totalCount } }`);
    expect(demo.data?.projects.totalCount).toBeGreaterThan(res.data?.projects.totalCount ?? 0);
  });

  it("lists a user's projects by username", async () => {
    t.resetCalls();
    const res = await t.gql<{ userProjects: { nodes: ProjectNode[] } }>(
      `{ userProjects(user: "alice", first: 50) { nodes { pathWithNamespace } } }`,
      {},
      { token: 'alice-token' },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.userProjects.nodes.some((n) => n.pathWithNamespace === 'alice/secret-notes')).toBe(true);
    expect(t.calls()[0]?.path).toBe('/api/v4/users/alice/projects');
    const demo = await t.gql<{ userProjects: { nodes: ProjectNode[] } }>(`{ userProjects(user: "alice", first: 50) { nodes { pathWithNamespace } } }`);
    expect(demo.data?.userProjects.nodes.some((n) => n.pathWithNamespace === 'alice/secret-notes')).toBe(false);
  });

  it('rejects an enum value GraphQL does not know before any call', async () => {
    t.resetCalls();
    const res = await t.gql(`{ projects(visibility: SECRET) { totalCount } }`);
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.message).toMatch(/SECRET/);
    expect(t.calls()).toHaveLength(0);
  });
});

describe('forks, users and languages', () => {
  it('lists the 20 forks of a project and answers their forkedFrom from the parent already loaded', async () => {
    t.resetCalls();
    const res = await t.gql<{ project: { forks: { totalCount: number; nodes: { forkedFrom: { name: string; visibility: string } }[] } } }>(
      `{ project(fullPath: "platform/core") { forks(first: 20) { totalCount nodes { forkedFrom { name visibility } } } } }`,
      {},
      { token: 'alice-token' },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.project.forks.totalCount).toBe(20);
    expect(res.data?.project.forks.nodes.every((n) => n.forkedFrom.name === 'Core' && n.forkedFrom.visibility === 'PUBLIC')).toBe(true);
    // The project and one page of its forks; GitLab's fork list omits forked_from_project, but every item is a fork of the project.
    expect(t.calls().map((c) => c.path)).toEqual(['/api/v4/projects/platform%2Fcore', '/api/v4/projects/1/forks']);
  });

  it('costs no parent call for fields GitLab embeds in forked_from_project, and one shared call for the rest', async () => {
    const query = (fields: string) => `{ projects(first: 100, search: "Core Fork") { nodes { forkedFrom { ${fields} } } } }`;
    t.resetCalls();
    const embedded = await t.gql<{ projects: { nodes: { forkedFrom: { name: string } }[] } }>(query('name pathWithNamespace'), {}, { token: 'alice-token' });
    expect(embedded.errors).toBeUndefined();
    expect(embedded.data?.projects.nodes).toHaveLength(20);
    expect(embedded.data?.projects.nodes.every((n) => n.forkedFrom.name === 'Core')).toBe(true);
    expect(t.calls()).toHaveLength(1);

    t.resetCalls();
    const full = await t.gql<{ projects: { nodes: { forkedFrom: { visibility: string } }[] } }>(
      query('name visibility permissions { projectAccess { accessLevel } }'),
      {},
      { token: 'alice-token' },
    );
    expect(full.errors).toBeUndefined();
    expect(full.data?.projects.nodes.every((n) => n.forkedFrom.visibility === 'PUBLIC')).toBe(true);
    expect(t.calls().map((c) => c.path)).toEqual(['/api/v4/projects', '/api/v4/projects/1']);
  });

  it('reads owner, permissions and the parent from the fork list itself, with no call per fork', async () => {
    t.resetCalls();
    const res = await t.gql<{ project: { forks: { nodes: { owner: { name: string } | null; permissions: unknown }[] } } }>(
      `{ project(fullPath: "platform/core") { forks(first: 2) { nodes { name owner { name } permissions { projectAccess { accessLevel } } forkedFrom { name } } } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.project.forks.nodes.every((n) => n.permissions !== null)).toBe(true);
    expect(t.calls().map((c) => c.path)).toEqual(['/api/v4/projects/platform%2Fcore', '/api/v4/projects/1/forks']);
  });

  it('reads licenseUrl, which GitLab sends only with license=true, with one call per listed project', async () => {
    t.resetCalls();
    const res = await t.gql<{ projects: { nodes: { licenseUrl: string | null }[] } }>(
      '{ projects(first: 2, orderBy: ID, sort: ASC) { nodes { licenseUrl } } }',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.projects.nodes[0]?.licenseUrl).toBe('http://gitlab.sandbox.test/platform/core/-/blob/main/LICENSE');
    expect(t.calls().map((c) => c.query.license?.[0] ?? '-')).toEqual(['-', 'true', 'true']);
  });

  it('lists project members with search', async () => {
    t.resetCalls();
    const res = await t.gql<{ project: { users: { totalCount: number; nodes: { username: string; state: string }[] } } }>(
      `{ project(fullPath: "platform/core") { users(first: 10) { totalCount nodes { username name state webUrl avatarUrl } } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.project.users.nodes.length).toBeGreaterThan(0);
    const name = res.data?.project.users.nodes[0]?.username ?? '';
    const searched = await t.gql<{ project: { users: { nodes: { username: string }[] } } }>(
      `query($q: String) { project(fullPath: "platform/core") { users(search: $q) { nodes { username } } } }`,
      { q: name },
    );
    expect(searched.data?.project.users.nodes.map((u) => u.username)).toContain(name);
  });

  it('returns language shares largest first', async () => {
    const res = await t.gql<{ project: { languages: { name: string; percentage: number }[] } }>(
      `{ project(fullPath: "platform/core") { languages { name percentage } } }`,
    );
    const shares = res.data?.project.languages ?? [];
    expect(shares.length).toBeGreaterThan(0);
    expect([...shares].sort((a, b) => b.percentage - a.percentage)).toEqual(shares);
  });
});

describe('Relay pagination', () => {
  let many: TestApp;
  beforeAll(async () => {
    many = await createTestApp({ sandbox: { bulkPublicProjects: 150 } });
  });
  afterAll(async () => {
    await many.close();
  });
  const names = async (args: string) => {
    const res = await many.gql<{
      projects: { totalCount: number | null; edges: { cursor: string; node: { restId: number } }[]; pageInfo: Record<string, unknown> };
    }>(
      `{ projects(${args}, orderBy: ID, sort: ASC) { totalCount edges { cursor node { restId } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
    );
    return res;
  };
  /** Every edge of the list, read in pages of 100. */
  const everything = async () => {
    const edges: { cursor: string; node: { restId: number } }[] = [];
    for (;;) {
      const page = (await names(`first: 100${edges.length ? `, after: "${edges[edges.length - 1]?.cursor}"` : ''}`)).data?.projects;
      edges.push(...(page?.edges ?? []));
      if (!page?.pageInfo.hasNextPage) return edges;
    }
  };

  it('fetches first: 30 after the tenth item with one call', async () => {
    const all = await names('first: 100');
    const ids = all.data?.projects.edges.map((e) => e.node.restId) ?? [];
    expect(ids.length).toBeGreaterThanOrEqual(40);
    many.resetCalls();
    const res = await names(`first: 30, after: "${encodeCursor(9)}"`);
    expect(res.data?.projects.edges.map((e) => e.node.restId)).toEqual(ids.slice(10, 40));
    expect(many.calls()).toHaveLength(1);
    expect(many.calls()[0]?.query).toMatchObject({ page: ['1'], per_page: ['40'] });
    expect(res.data?.projects.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
  });

  it('walks a list page by page with endCursor across upstream page boundaries', async () => {
    const all = (await everything()).map((e) => e.node.restId);
    expect(all.length).toBeGreaterThan(150);
    const seen: number[] = [];
    let after: string | null = null;
    for (let i = 0; i < 40; i++) {
      const res = await names(`first: 7${after ? `, after: "${after}"` : ''}`);
      const page = res.data?.projects;
      seen.push(...(page?.edges.map((e) => e.node.restId) ?? []));
      if (!page?.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor as string;
    }
    expect(seen).toEqual(all);
  });

  it('pages backwards with last and before', async () => {
    const all = await everything();
    const res = await names(`last: 3, before: "${all[10]?.cursor}"`);
    expect(res.data?.projects.edges.map((e) => e.node.restId)).toEqual(all.slice(7, 10).map((e) => e.node.restId));
    const tail = await names('last: 2');
    expect(tail.data?.projects.edges.map((e) => e.node.restId)).toEqual(all.slice(-2).map((e) => e.node.restId));
    expect(tail.data?.projects.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
  });

  it('reports pageInfo on the last page and on an empty list', async () => {
    const all = await everything();
    const last = await names(`first: 10, after: "${all[all.length - 2]?.cursor}"`);
    expect(last.data?.projects.edges).toHaveLength(1);
    expect(last.data?.projects.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const empty = await many.gql(
      `{ projects(search: "no-such-project-anywhere") { totalCount edges { cursor } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
    );
    expect(empty.data).toEqual({
      projects: { totalCount: 0, edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } },
    });
  });

  it('answers first: 0 with an empty page and the total', async () => {
    const res = await names('first: 0');
    expect(res.data?.projects.edges).toEqual([]);
    expect(res.data?.projects.totalCount).toBeGreaterThan(0);
  });

  it('refuses first above 100 or below 0 and invalid cursors before calling GitLab', async () => {
    many.resetCalls();
    for (const args of ['first: 101', 'first: -1', 'last: 500', 'after: "bogus"', `before: "${Buffer.from('offset:x').toString('base64url')}"`]) {
      const res = await names(args);
      expect(res.data?.projects ?? null).toBeNull();
      expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    expect(many.calls()).toHaveLength(0);
  });
});

describe('totalCount above 10,000 items', () => {
  let big: TestApp;
  beforeAll(async () => {
    big = await createTestApp({ sandbox: { bulkPublicProjects: 10_050 } });
  });
  afterAll(async () => {
    await big.close();
  });

  it('is null when GitLab omits X-Total, and paging forward still works', async () => {
    const res = await big.gql<{ projects: { totalCount: number | null; pageInfo: { hasNextPage: boolean; endCursor: string } } }>(
      `{ projects(first: 100) { totalCount pageInfo { hasNextPage endCursor } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.projects).toMatchObject({ totalCount: null, pageInfo: { hasNextPage: true } });
    const next = await big.gql<{ projects: { edges: unknown[] } }>(`query($a: String) { projects(first: 100, after: $a) { edges { cursor } } }`, {
      a: res.data?.projects.pageInfo.endCursor,
    });
    expect(next.data?.projects.edges).toHaveLength(100);
  });

  it('explains that last needs before when the total is unknown', async () => {
    const res = await big.gql(`{ projects(last: 5) { edges { cursor } } }`);
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.message).toMatch(/"last" needs "before"/);
  });
});
