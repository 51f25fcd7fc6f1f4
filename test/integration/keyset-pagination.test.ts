/**
 * Keyset pagination: the sandbox serves GitLab's keyset pages and its 405
 * past the offset limit, and the gateway walks project lists (orderBy: ID)
 * and project jobs past that limit with one call a page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BULK_FIRST_ID } from '../../src/sandbox/gitlab/seed.js';
import { jobsCursor } from '../../src/upstreams/gitlab/client.js';
import { encodeCursor } from '../../src/upstreams/pagination.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

interface Edge {
  cursor: string;
  node: { restId: number };
}
interface Connection {
  totalCount: number | null;
  edges: Edge[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; endCursor: string | null };
}

const EDGES = 'totalCount edges { cursor node { restId } } pageInfo { hasNextPage hasPreviousPage endCursor }';

async function rest(t: TestApp, path: string, token = 'demo-token'): Promise<{ status: number; link: string | null; body: unknown }> {
  const response = await fetch(`${t.sandbox.url}/api/v4${path}`, { headers: { 'private-token': token } });
  return { status: response.status, link: response.headers.get('link'), body: await response.json() };
}

/** Walks a connection with `first` pages; `read` answers one page for an `after` cursor. */
async function walk(read: (after: string | null) => Promise<Connection | undefined>): Promise<{ ids: number[]; pages: Connection[] }> {
  const ids: number[] = [];
  const pages: Connection[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await read(after);
    if (!page) throw new Error('a page came back without data');
    pages.push(page);
    ids.push(...page.edges.map((edge) => edge.node.restId));
    if (!page.pageInfo.hasNextPage) return { ids, pages };
    after = page.pageInfo.endCursor;
  }
}

describe('the sandbox, as GitLab pages by keyset', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ sandbox: { bulkPublicProjects: 30, bulkJobs: { seeded: { 7: 45 } } } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('links each project page to the ids after its last, and ends on an empty page without a link', async () => {
    const first = await rest(t, '/projects?pagination=keyset&order_by=id&sort=asc&per_page=20');
    const ids = (first.body as { id: number }[]).map((p) => p.id);
    expect(ids).toHaveLength(20);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(first.link).toBe(`<${t.sandbox.url}/api/v4/projects?id_after=${ids[19]}&order_by=id&pagination=keyset&per_page=20&sort=asc>; rel="next"`);
    let next = first.link ? /<([^>]+)>/.exec(first.link)?.[1] : undefined;
    const seen = [...ids];
    while (next) {
      const page = await rest(t, next.slice(`${t.sandbox.url}/api/v4`.length));
      seen.push(...(page.body as { id: number }[]).map((p) => p.id));
      next = page.link ? /<([^>]+)>/.exec(page.link)?.[1] : undefined;
      if (!next) expect(page.body).toEqual([]);
    }
    const offset = await rest(t, '/projects?order_by=id&sort=asc&per_page=100');
    expect(seen).toEqual((offset.body as { id: number }[]).map((p) => p.id));
    const down = await rest(t, `/projects?pagination=keyset&order_by=id&sort=desc&per_page=2`);
    expect(down.link).toContain(`id_before=${(down.body as { id: number }[])[1]?.id}`);
  });

  it('refuses keyset in any order but id, and offset pages past 50,000, with 405 as GitLab words them', async () => {
    expect(await rest(t, '/projects?pagination=keyset&order_by=name')).toEqual({
      status: 405,
      link: null,
      body: { error: 'Keyset pagination is not yet available for this type of request' },
    });
    expect(await rest(t, '/projects?page=501&per_page=100')).toEqual({
      status: 405,
      link: null,
      body: {
        error:
          'Offset pagination has a maximum allowed offset of 50000 for requests that return objects of type Project. ' +
          'Remaining records can be retrieved using keyset pagination.',
      },
    });
    expect((await rest(t, '/projects?page=500&per_page=100')).status).toBe(200);
    expect((await rest(t, '/projects/7/jobs?page=2501&per_page=20')).body).toEqual({
      error:
        'Offset pagination has a maximum allowed offset of 50000 for requests that return objects of type Ci::Build. ' +
        'Remaining records can be retrieved using keyset pagination.',
    });
    expect((await rest(t, '/projects/7/jobs?pagination=keyset&sort=asc')).status).toBe(405);
  });

  it('walks project jobs newest first with opaque cursors, linking on only while more follow', async () => {
    const all = (await rest(t, '/projects/7/jobs?per_page=100')).body as { id: number }[];
    const first = await rest(t, '/projects/7/jobs?pagination=keyset&per_page=20');
    const ids = (first.body as { id: number }[]).map((j) => j.id);
    expect(ids).toEqual(all.slice(0, 20).map((j) => j.id));
    // The cursor is GitLab's: URL-safe Base64 of {"id":"<last id>","_kd":"n"}.
    const cursor = new URL(/<([^>]+)>/.exec(first.link ?? '')?.[1] ?? 'http://x').searchParams.get('cursor');
    expect(JSON.parse(Buffer.from(cursor ?? '', 'base64url').toString())).toEqual({ id: String(ids[19]), _kd: 'n' });
    expect(cursor).toBe(jobsCursor(ids[19] ?? 0));
    const rest2 = await rest(t, `/projects/7/jobs?pagination=keyset&per_page=100&cursor=${encodeURIComponent(cursor ?? '')}`);
    expect((rest2.body as { id: number }[]).map((j) => j.id)).toEqual(all.slice(20).map((j) => j.id));
    expect(rest2.link).toBeNull();
    expect((await rest(t, '/projects/7/jobs?pagination=keyset&cursor=not-json')).status).toBe(500);
  });
});

describe('walking past GitLab offset limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ sandbox: { bulkPublicProjects: 60_000, bulkJobs: { seeded: { 7: 3_000 } } } });
  }, 120_000);
  afterAll(async () => {
    await t.close();
  });

  const projects = async (args: string, token = 'admin-token') =>
    (await t.gql<{ projects: Connection }>(`{ projects(${args}) { ${EDGES} } }`, {}, { token })).data?.projects;

  it('reads 60,000 projects ordered by id, each once, one keyset call a page after the first', async () => {
    t.resetCalls();
    const { ids, pages } = await walk((after) => projects(`orderBy: ID, sort: ASC, first: 100${after ? `, after: "${after}"` : ''}`));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    // Every one of the 60,000 generated projects (ids BULK_FIRST_ID on, above 2^31) came, each once.
    const bulk = ids.filter((id) => id >= BULK_FIRST_ID && id < BULK_FIRST_ID + 60_000);
    expect(bulk).toHaveLength(60_000);
    // One call a page; every page after the first by keyset, none by an offset.
    const calls = t.calls({ path: '/api/v4/projects' });
    expect(calls).toHaveLength(pages.length);
    expect(calls.slice(1).every((call) => call.query.pagination?.[0] === 'keyset' && call.query.page === undefined)).toBe(true);
    expect(pages[0]?.totalCount).toBeNull();
    // The last id GitLab itself lists first in descending order is the walk's last.
    const newest = await projects('orderBy: ID, sort: DESC, first: 1');
    expect(ids[ids.length - 1]).toBe(newest?.edges[0]?.node.restId);
  }, 300_000);

  it('says how to go on when an offset page lies past the limit, without a second call', async () => {
    t.resetCalls();
    const res = await t.gql(`{ projects(first: 100, after: "${encodeCursor(50_099)}") { edges { cursor } } }`, {}, { token: 'admin-token' });
    expect(res.data?.projects ?? null).toBeNull();
    expect(res.errors?.[0]?.message).toBe(
      'GitLab pages this list by offset only up to item 50,000. Order it by id (orderBy: ID) and page forward with first and after: those pages are read by keyset, at any depth.',
    );
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(t.calls()).toHaveLength(1);
  });

  it('says how to go on when an offset page of jobs lies past the limit', async () => {
    const res = await t.gql(`{ project(id: "7") { jobs(first: 100, after: "${encodeCursor(50_099)}") { nodes { id } } } }`);
    expect(res.data).toEqual({ project: { jobs: null } });
    expect(res.errors?.[0]).toMatchObject({
      message: 'GitLab pages this list by offset only up to item 50,000. Page forward with first and after: those pages are read by keyset, at any depth.',
      extensions: { code: 'BAD_USER_INPUT' },
    });
  });

  it('keeps cursors issued before keys working, and hands out keyed ones from them', async () => {
    const byOffset = await projects(`orderBy: ID, sort: DESC, first: 5, after: "${encodeCursor(9)}"`);
    const top = await projects('orderBy: ID, sort: DESC, first: 20');
    expect(byOffset?.edges.map((e) => e.node.restId)).toEqual(top?.edges.slice(10, 15).map((e) => e.node.restId));
    t.resetCalls();
    const next = await projects(`orderBy: ID, sort: DESC, first: 5, after: "${byOffset?.pageInfo.endCursor}"`);
    expect(next?.edges.map((e) => e.node.restId)).toEqual(top?.edges.slice(15, 20).map((e) => e.node.restId));
    expect(t.calls()[0]?.query).toMatchObject({ pagination: ['keyset'], order_by: ['id'], sort: ['desc'], per_page: ['6'] });
    expect(t.calls()[0]?.query.id_before).toEqual([String(top?.edges[14]?.node.restId)]);
    // Backwards from a keyed cursor reads by offset, as keyset serves forward pages only.
    const back = await projects(`orderBy: ID, sort: DESC, last: 3, before: "${next?.edges[0]?.cursor}"`);
    expect(back?.edges.map((e) => e.node.restId)).toEqual(top?.edges.slice(12, 15).map((e) => e.node.restId));
    expect(back?.pageInfo.hasPreviousPage).toBe(true);
  });

  it('walks 3,000 jobs of a project newest first, each once, by keyset after the first page', async () => {
    t.resetCalls();
    const { ids, pages } = await walk(
      async (after) =>
        (
          await t.gql<{ project: { jobs: Connection } }>(`query($after: String) { project(id: "7") { jobs(first: 100, after: $after) { ${EDGES} } } }`, {
            after,
          })
        ).data?.project.jobs,
    );
    expect(ids.length).toBeGreaterThan(3_000);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const calls = t.calls({ path: '/api/v4/projects/7/jobs' });
    expect(calls).toHaveLength(pages.length);
    expect(calls.slice(1).every((call) => call.query.pagination?.[0] === 'keyset' && call.query.cursor !== undefined)).toBe(true);
    expect(pages.at(-1)?.pageInfo.hasNextPage).toBe(false);
    expect(pages.every((page) => page.totalCount === null)).toBe(true);
  }, 120_000);

  it('answers first: 0 after a keyed cursor with no items and whether more follow', async () => {
    const page = await projects('orderBy: ID, sort: ASC, first: 2');
    const empty = await projects(`orderBy: ID, sort: ASC, first: 0, after: "${page?.pageInfo.endCursor}"`);
    expect(empty?.edges).toEqual([]);
    expect(empty?.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
  });
});
