/**
 * The gateway against GitLab as its own code defines it, not against our
 * sandbox: a replay upstream serves the records of test/fixtures/gitlab-entities
 * (written key by key from GitLab's Grape entities, each naming its source),
 * and the documents select every field of every GitLab type, built from the
 * schema's introspection so that a new field is covered without a new test.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import {
  getIntrospectionQuery,
  type IntrospectionField,
  type IntrospectionObjectType,
  type IntrospectionQuery,
  type IntrospectionType,
  type IntrospectionTypeRef,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
interface Fixture {
  _source: string[];
  status: number;
  headers?: Record<string, string>;
  body: Json;
}

const fixture = (name: string): Fixture => JSON.parse(readFileSync(new URL(`../fixtures/gitlab-entities/${name}`, import.meta.url), 'utf8')) as Fixture;
const F = {
  project: fixture('project.json'),
  projects: fixture('projects.json'),
  forks: fixture('forks.json'),
  jobs: fixture('jobs.json'),
  hooks: fixture('hooks.json'),
  pushRule: fixture('push-rule.json'),
  users: fixture('users.json'),
  languages: fixture('languages.json'),
  pipelines: fixture('pipelines.json'),
  pipeline: fixture('pipeline.json'),
  pipelineVariables: fixture('pipeline-variables.json'),
  testReportSummary: fixture('test-report-summary.json'),
  bridges: fixture('bridges.json'),
  commit: fixture('commit.json'),
};
const records = (f: Fixture): { [key: string]: Json }[] => f.body as { [key: string]: Json }[];
const PROJECT = F.project.body as { [key: string]: Json };
const PROJECT_ID = PROJECT.id as number;
const JOBS = records(F.jobs);
const JOB_ID = JOBS[0]?.id as number;
const PIPELINE_ID = (JOBS[0]?.pipeline as { id: number } | undefined)?.id ?? 0;
const HOOK_ID = records(F.hooks)[0]?.id as number;

/** Every project record of the fixtures by id, for GET /projects/:id: the single read where there is one, else the list item. */
const PROJECTS = new Map<number, Json>([...records(F.projects), ...records(F.forks), PROJECT].map((p) => [p.id as number, p]));

function reply(res: ServerResponse, status: number, body: Json, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A GitLab that answers from the fixtures, and records what it was asked. */
function replayUpstream(calls: string[]): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://gitlab.test');
    calls.push(`${req.method ?? ''} ${url.pathname}`);
    const parts = url.pathname
      .replace(/^\/api\/v4\//, '')
      .split('/')
      .map(decodeURIComponent);
    const serve = (f: Fixture, body: Json = f.body) => reply(res, f.status, body, f.headers);
    const notFound = () => reply(res, 404, { message: '404 Not found' });
    if (req.method !== 'GET' || parts[0] !== 'projects') return notFound();
    if (parts.length === 1) return serve(F.projects);
    const id = Number(parts[1]);
    const project = PROJECTS.get(id);
    if (!project) return reply(res, 404, { message: '404 Project Not Found' });
    const rest = parts.slice(2).join('/');
    if (rest === '') {
      // license_url and license come only with license=true, as BasicProjectDetails exposes them `if: :license`.
      if (url.searchParams.get('license') === 'true') return reply(res, 200, project);
      const { license: _license, license_url: _url, ...withoutLicense } = project as { [key: string]: Json };
      return reply(res, 200, withoutLicense);
    }
    if (rest === 'forks') return serve(F.forks);
    if (rest === 'users') return serve(F.users);
    if (rest === 'languages') return serve(F.languages);
    if (rest === 'push_rule') return serve(F.pushRule);
    if (rest === 'hooks') return serve(F.hooks);
    if (rest === 'jobs') return serve(F.jobs);
    if (rest === 'pipelines') return serve(F.pipelines);
    // Every listed pipeline answers its reads; only the first has its own full record.
    const pipeline = /^pipelines\/(\d+)(?:\/(\w+))?$/.exec(rest);
    const listed = pipeline ? records(F.pipelines).find((p) => p.id === Number(pipeline[1])) : undefined;
    if (pipeline && listed) {
      const sub = pipeline[2];
      if (sub === undefined) return Number(pipeline[1]) === PIPELINE_ID ? serve(F.pipeline) : reply(res, 200, listed);
      const served: Record<string, Fixture> = { jobs: F.jobs, variables: F.pipelineVariables, test_report_summary: F.testReportSummary, bridges: F.bridges };
      const f = served[sub];
      if (f) return serve(f);
      // The fixtures' GitLab predates 19.2: its router has no trigger_jobs route (lib/api/api.rb's catch-all 404).
      if (sub === 'trigger_jobs') return reply(res, 404, { error: '404 Not Found' });
    }
    if (rest === `repository/commits/${(F.commit.body as { id: string }).id}`) return serve(F.commit);
    const hook = /^hooks\/(\d+)$/.exec(rest);
    if (hook) return reply(res, 200, records(F.hooks).find((h) => h.id === Number(hook[1])) ?? null);
    const job = /^jobs\/(\d+)$/.exec(rest);
    const found = job ? JOBS.find((j) => j.id === Number(job[1])) : undefined;
    if (found) return reply(res, 200, found);
    if (/^jobs\/\d+\/trace$/.test(rest)) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return res.end('Running with gitlab-runner 17.8.0\n\u001b[32;1mJob succeeded\u001b[0;m\n');
    }
    return notFound();
  });
}

// ---- documents from introspection ----

/** Arguments for the fields that require some: a field added with a required argument fails here until it is given one. */
const REQUIRED_ARGS: Readonly<Record<string, string>> = {
  'Project.pipelineJobs': `pipelineId: ${PIPELINE_ID}`,
  'Project.job': `id: "${JOB_ID}"`,
  'Project.pipeline': `id: "${PIPELINE_ID}"`,
  'Project.hook': `id: "${HOOK_ID}"`,
  'Project.latestArtifactsArchiveUrl': 'ref: "main", job: "build"',
  'Project.latestArtifactFileUrl': 'ref: "main", job: "build", path: "dist/app.js"',
  'Job.artifactFileUrl': 'path: "dist/app.js"',
};

function named(ref: IntrospectionTypeRef): string {
  return 'ofType' in ref && ref.ofType ? named(ref.ofType) : (ref as { name: string }).name;
}

function selectionBuilder(types: Map<string, IntrospectionType>) {
  const missing: string[] = [];
  function select(typeName: string, path: readonly string[]): string {
    const type = types.get(typeName) as IntrospectionObjectType;
    const revisit = path.includes(typeName);
    const parts: string[] = [];
    for (const field of type.fields as readonly IntrospectionField[]) {
      const target = types.get(named(field.type));
      const leaf = target?.kind === 'SCALAR' || target?.kind === 'ENUM';
      // `nodes` repeats `edges { node }`; a type met again on the path gets its leaves only, so the document ends.
      if (field.name === 'nodes' || (!leaf && revisit)) continue;
      const required = field.args.filter((a) => a.type.kind === 'NON_NULL' && a.defaultValue === null);
      const key = `${typeName}.${field.name}`;
      let args = '';
      if (required.length) {
        const given = REQUIRED_ARGS[key];
        if (given === undefined) {
          missing.push(key);
          continue;
        }
        args = `(${given})`;
      }
      parts.push(leaf ? `${field.name}${args}` : `${field.name}${args} { ${select(named(field.type), [...path, typeName])} }`);
    }
    return parts.join(' ');
  }
  return { select, missing };
}

// ---- checks ----

const snake = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
/** The fixture key a field reads, where it is not the field's own name in snake case. */
const KEY_OF: Readonly<Record<string, string>> = { restId: 'id', links: '_links', forkedFrom: 'forked_from_project', sha: 'id' };

/** Every object of the fixtures with a numeric id, by id (a user or a pipeline is the same wherever it appears). */
function indexById(value: Json, index: Map<number, { [key: string]: Json }>): Map<number, { [key: string]: Json }> {
  if (Array.isArray(value)) for (const item of value) indexById(item, index);
  else if (value && typeof value === 'object') {
    if (typeof value.id === 'number' && !index.has(value.id)) index.set(value.id, value);
    for (const child of Object.values(value)) indexById(child, index);
  }
  return index;
}

/**
 * Fields the response gave as null although the fixture record they read had
 * a value. A response object is matched to its record by restId, or else
 * through its parent's record (license, statistics, permissions, links).
 */
function nullsOverValues(value: unknown, record: Json | undefined, index: Map<number, { [key: string]: Json }>, path: string, found: string[]): string[] {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      nullsOverValues(item, Array.isArray(record) ? record[i] : undefined, index, `${path}[${i}]`, found);
    });
    return found;
  }
  if (!value || typeof value !== 'object') return found;
  const object = value as Record<string, unknown>;
  const own = typeof object.restId === 'number' ? index.get(object.restId) : undefined;
  const source = own ?? (record && typeof record === 'object' && !Array.isArray(record) ? record : undefined);
  for (const [field, child] of Object.entries(object)) {
    const sent = source?.[KEY_OF[field] ?? snake(field)];
    if (child === null && sent !== null && sent !== undefined) found.push(`${path}.${field}`);
    nullsOverValues(child, sent ?? undefined, index, `${path}.${field}`, found);
  }
  return found;
}

/** Every `restId` the response holds, so that ids past 2^31 are seen to arrive exact. */
function restIds(value: unknown, into: number[] = []): number[] {
  if (Array.isArray(value)) for (const item of value) restIds(item, into);
  else if (value && typeof value === 'object') {
    for (const [field, child] of Object.entries(value)) {
      if (field === 'restId' && typeof child === 'number') into.push(child);
      restIds(child, into);
    }
  }
  return into;
}

describe("the gateway against GitLab's own records", () => {
  let t: TestApp;
  let upstream: Server;
  const calls: string[] = [];
  let types: Map<string, IntrospectionType>;

  beforeAll(async () => {
    upstream = replayUpstream(calls);
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as AddressInfo;
    // A document that selects every field of every GitLab type is far above the default limits.
    t = await createTestApp({ gitlabUrl: new URL(`http://127.0.0.1:${port}`), env: { MAX_TOKENS: '20000', MAX_COST: '1000000', MAX_DEPTH: '30' } });
    const introspection = await t.gql<IntrospectionQuery>(getIntrospectionQuery());
    types = new Map((introspection.data?.__schema.types ?? []).map((type) => [type.name, type]));
  });
  afterAll(async () => {
    await t.close();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  it('names the GitLab source file of every fixture', () => {
    for (const f of Object.values(F)) {
      expect(f._source.length).toBeGreaterThan(0);
      for (const source of f._source) expect(source).toMatch(/^(ee\/)?(lib\/(ee\/)?api|app\/serializers)\//);
    }
  });

  it('needs no argument it cannot be given: every required argument of a GitLab field is known here', () => {
    const { select, missing } = selectionBuilder(types);
    select('Project', []);
    expect(missing).toEqual([]);
  });

  it.each([
    ['project', `{ project(id: "${PROJECT_ID}") { SELECTION } }`],
    ['projects', '{ projects(first: 2) { edges { cursor node { SELECTION } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } totalCount } }'],
  ])('selects every field of %s with no error and no null where GitLab sent a value', async (_name, template) => {
    const { select } = selectionBuilder(types);
    const query = template.replace('SELECTION', select('Project', []));
    const result = await t.gql(query);
    expect(result.errors ?? []).toEqual([]);
    // The runner registration token GitLab sends a Maintainer has no field: selecting everything does not reach it.
    expect(JSON.stringify(result)).not.toContain('SENTINEL');
    const index = new Map<number, { [key: string]: Json }>();
    for (const f of Object.values(F)) indexById(f.body, index);
    expect(nullsOverValues(result.data, undefined, index, 'data', [])).toEqual([]);
    // Every id past 2^31 arrives exact: it is one of the fixtures' ids.
    const ids = restIds(result.data);
    expect(ids.filter((id) => id > 2 ** 31).length).toBeGreaterThan(10);
    for (const id of ids) expect(index.has(id), `restId ${id}`).toBe(true);
  });

  it('reads licenseUrl, which no list holds, with license=true: one call per project', async () => {
    calls.length = 0;
    const result = await t.gql<{ projects: { nodes: { restId: number; licenseUrl: string | null }[] } }>(
      '{ projects(first: 2) { nodes { restId licenseUrl } } }',
    );
    expect(result.errors ?? []).toEqual([]);
    expect(result.data?.projects.nodes).toEqual([
      { restId: PROJECT_ID, licenseUrl: PROJECT.license_url },
      { restId: 4_000_000_043, licenseUrl: null },
    ]);
    expect(calls.sort()).toEqual(['GET /api/v4/projects', 'GET /api/v4/projects/4000000042', 'GET /api/v4/projects/4000000043']);
  });

  it('reads a fork list without one call per fork', async () => {
    calls.length = 0;
    const result = await t.gql(`{ project(id: "${PROJECT_ID}") { forks(first: 20) { nodes { restId name owner { restId } forkedFrom { restId name } } } } }`);
    expect(result.errors ?? []).toEqual([]);
    expect(calls.filter((c) => /^GET \/api\/v4\/projects\/\d+$/.test(c))).toEqual([`GET /api/v4/projects/${PROJECT_ID}`]);
  });
});
