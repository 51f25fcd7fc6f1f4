/**
 * The sandbox GitLab's CI jobs over real HTTP: lists without counts, the job
 * record against GitLab's job.json, the actions and their role rules, the
 * manual clock, traces, artifact archives (parsed here down to the central
 * directory), downloads by ref, job tokens, and a large archive streamed
 * without being held in memory.
 */
import { readFileSync } from 'node:fs';
import { request as httpGet } from 'node:http';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { crc32, inflateRawSync } from 'node:zlib';
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LARGE_ARTIFACT_JOB_ID,
  LARGE_ARTIFACT_PATH,
  SEED_JOB_TOKEN,
  STEP_MS,
  startGitlabSandbox,
  type GitlabSandbox,
} from '../../src/sandbox/gitlab/server.js';

type Json = Record<string, unknown>;

interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
  raw: Buffer;
}

let sandbox: GitlabSandbox;

beforeAll(async () => {
  sandbox = await startGitlabSandbox({ clock: 'manual' });
});

afterAll(async () => {
  await sandbox.close();
});

async function call(method: string, path: string, token?: string, headers: Record<string, string> = {}, target = sandbox): Promise<Reply> {
  const response = await fetch(`${target.url}/api/v4${path}`, { method, headers: { ...(token ? { 'Private-Token': token } : {}), ...headers } });
  const raw = Buffer.from(await response.arrayBuffer());
  let body: unknown;
  try {
    body = raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8'));
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body, raw };
}

const get = (path: string, token?: string, headers?: Record<string, string>, target?: GitlabSandbox): Promise<Reply> =>
  call('GET', path, token, headers, target);
const post = (path: string, token?: string, target?: GitlabSandbox): Promise<Reply> => call('POST', path, token, {}, target);
const json = (reply: Reply): Json => reply.body as Json;
const items = (reply: Reply): Json[] => reply.body as Json[];

interface ZipEntry {
  name: string;
  method: number;
  crc: number;
  size: number;
  data: Buffer;
}

/** Reads a zip through its end record and central directory, then each entry's local header and data. */
function readZip(zip: Buffer): ZipEntry[] {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  expect(end).toBeGreaterThan(0);
  const count = zip.readUInt16LE(end + 10);
  const directorySize = zip.readUInt32LE(end + 12);
  let offset = zip.readUInt32LE(end + 16);
  expect(offset + directorySize).toBe(end);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    expect(zip.readUInt32LE(offset)).toBe(0x02014b50);
    const method = zip.readUInt16LE(offset + 10);
    const crc = zip.readUInt32LE(offset + 16);
    const compressed = zip.readUInt32LE(offset + 20);
    const size = zip.readUInt32LE(offset + 24);
    const nameLength = zip.readUInt16LE(offset + 28);
    const extra = zip.readUInt16LE(offset + 30);
    const comment = zip.readUInt16LE(offset + 32);
    const local = zip.readUInt32LE(offset + 42);
    const name = zip.subarray(offset + 46, offset + 46 + nameLength).toString('utf8');
    expect(zip.readUInt32LE(local)).toBe(0x04034b50);
    const dataStart = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const stored = zip.subarray(dataStart, dataStart + compressed);
    const data = method === 8 ? inflateRawSync(stored) : stored;
    entries.push({ name, method, crc, size, data });
    offset += 46 + nameLength + extra + comment;
  }
  return entries;
}

describe('job lists', () => {
  it('lists project jobs newest first, paginated without X-Total, X-Total-Pages or rel="last"', async () => {
    const first = await get('/projects/1/jobs?per_page=5', 'demo-token');
    expect(first.status).toBe(200);
    expect(items(first).map((job) => job.id)).toEqual([1020, 1019, 1018, 1017, 1016]);
    expect(first.headers.has('x-total')).toBe(false);
    expect(first.headers.has('x-total-pages')).toBe(false);
    expect(first.headers.get('x-next-page')).toBe('2');
    expect(first.headers.get('link')).toBe(
      `<${sandbox.url}/api/v4/projects/1/jobs?page=2&per_page=5>; rel="next", <${sandbox.url}/api/v4/projects/1/jobs?page=1&per_page=5>; rel="first"`,
    );
    const last = await get('/projects/1/jobs?per_page=5&page=4', 'demo-token');
    expect(items(last).map((job) => job.id)).toEqual([1005, 1004, 1003, 1002, 1001]);
    expect(last.headers.get('x-next-page')).toBe('');
    expect(last.headers.get('link')).not.toContain('rel="last"');
  });

  it('filters by scope and scope[], and rejects unknown statuses', async () => {
    expect(items(await get('/projects/1/jobs?scope=manual', 'demo-token')).map((job) => job.id)).toEqual([1005]);
    expect(items(await get('/projects/1/jobs?scope[]=failed&scope[]=skipped', 'demo-token')).map((job) => job.id)).toEqual([1011, 1010, 1003]);
    expect(
      items(await get('/projects/1/jobs?scope[]=preparing&scope[]=waiting_for_resource&scope[]=scheduled&scope[]=canceling', 'demo-token')).map(
        (j) => j.status,
      ),
    ).toEqual(['canceling', 'scheduled', 'waiting_for_resource', 'preparing']);
    expect(await get('/projects/1/jobs?scope=started', 'demo-token')).toMatchObject({ status: 400, body: { error: 'scope does not have a valid value' } });
  });

  it('lists a pipeline in id order with counts, retried jobs only on request', async () => {
    const reply = await get('/projects/1/pipelines/101/jobs', 'demo-token');
    expect(items(reply).map((job) => job.id)).toEqual([1001, 1002, 1003, 1004, 1005]);
    expect(reply.headers.get('x-total')).toBe('5');
    expect(items(await get('/projects/1/pipelines/101/jobs?scope=success', 'demo-token')).map((job) => job.id)).toEqual([1001, 1002, 1004]);
    expect(await get('/projects/1/pipelines/201/jobs', 'demo-token')).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect((await get('/projects/1/pipelines/101/jobs')).status).toBe(200);
  });

  it('applies the read rules: 401 anonymous, 403 for a Guest of a private project, Reporters read', async () => {
    expect(await get('/projects/1/jobs')).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expect(await get('/projects/2/jobs', 'demo-token')).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect(items(await get('/projects/6/jobs', 'bob-token')).map((job) => job.id)).toEqual([4002, 4001]);
    expect((await get('/projects/10/jobs', 'demo-token')).status).toBe(404);
    expect(items(await get('/projects/2/jobs', 'admin-token'))).toHaveLength(1);
  });
});

describe('the job record', () => {
  const schemaDir = new URL('../fixtures/gitlab-schemas/public_api/v4/', import.meta.url);
  const readSchema = (name: string): Json => JSON.parse(readFileSync(fileURLToPath(new URL(name, schemaDir)), 'utf8')) as Json;
  type AjvClass = typeof AjvModule.default;
  const Ajv = ((AjvModule as unknown as { default?: AjvClass }).default ?? AjvModule) as AjvClass;
  type AddFormats = typeof addFormatsModule.default;
  const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as AddFormats;

  /**
   * job.json with the adjustments reference/gitlab/README.md notes: it lacks
   * failure_reason (failed jobs) and download_url (erase and keep), and its
   * runner.json is stale (current GitLab adds paused and runner_type and
   * sends ip_address null).
   */
  function jobValidator() {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const job = readSchema('job.json');
    const runner = readSchema('runner.json');
    const runnerProperties = runner.properties as Json;
    ajv.addSchema(
      {
        ...runner,
        properties: { ...runnerProperties, ip_address: { type: ['string', 'null'] }, paused: { type: 'boolean' }, runner_type: { type: 'string' } },
      },
      new URL('runner.json', schemaDir).href,
    );
    for (const name of ['runner_manager.json', 'artifact.json', 'artifact_file.json', 'user/basic.json', 'commit/basic.json', 'pipeline/basic.json']) {
      ajv.addSchema(readSchema(name), new URL(name, schemaDir).href);
    }
    const properties = { ...(job.properties as Json), failure_reason: { type: 'string' }, download_url: { type: 'null' } };
    return ajv.compile({ ...job, $id: new URL('job.json', schemaDir).href, properties });
  }

  it('matches job.json (adjusted) for every seeded job of every state', async () => {
    const validate = jobValidator();
    const jobs = [
      ...items(await get('/projects/1/jobs?per_page=100', 'admin-token')),
      ...items(await get('/projects/7/jobs?per_page=100', 'admin-token')),
      ...items(await get('/projects/2/jobs?per_page=100', 'admin-token')),
      ...items(await get('/projects/6/jobs?per_page=100', 'admin-token')),
    ];
    expect(jobs).toHaveLength(28);
    for (const job of jobs) expect(validate(job) ? [] : validate.errors, `job ${String(job.id)}`).toEqual([]);
    // Strict: an unknown key fails it.
    expect(validate({ ...jobs[0], surprise: true })).toBe(false);
  });

  it("has every field of the spec's job record and the current ones", async () => {
    const job = json(await get('/projects/1/jobs/1001', 'demo-token'));
    for (const key of [
      'id',
      'name',
      'stage',
      'ref',
      'web_url',
      'tag',
      'allow_failure',
      'status',
      'coverage',
      'created_at',
      'started_at',
      'finished_at',
      'duration',
      'artifacts_expire_at',
      'artifacts',
      'artifacts_file',
      'runner',
      'commit',
      'pipeline',
      'user',
      'erased_at',
      'queued_duration',
      'tag_list',
      'archived',
      'runner_manager',
      'project',
    ]) {
      expect(job, key).toHaveProperty(key);
    }
    expect(job).toMatchObject({
      id: 1001,
      name: 'build',
      stage: 'build',
      ref: 'main',
      tag: false,
      status: 'success',
      duration: 90,
      queued_duration: 2,
      web_url: 'http://gitlab.sandbox.test/platform/core/-/jobs/1001',
      tag_list: ['docker', 'linux'],
      pipeline: { id: 101, project_id: 1, ref: 'main', status: 'success' },
      user: { id: 3, username: 'alice' },
      artifacts_file: { filename: 'artifacts.zip' },
    });
    expect((job.artifacts as Json[]).map((a) => a.file_type)).toEqual(['archive', 'metadata', 'trace', 'junit']);
    expect(json(await get('/projects/1/jobs/1010', 'demo-token')).failure_reason).toBe('script_failure');
    expect(json(await get('/projects/1/jobs/1002', 'demo-token'))).not.toHaveProperty('failure_reason');
    expect(json(await get('/projects/1/jobs/1002', 'demo-token')).coverage).toBe(87.5);
    expect(json(await get('/projects/1/jobs/1006', 'demo-token'))).toMatchObject({ ref: 'v1.2.0', tag: true, artifacts_expire_at: null });
  });

  it('answers 404 Not found for an unknown job and 400 for a non-integer id', async () => {
    expect(await get('/projects/1/jobs/2001', 'demo-token')).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await get('/projects/1/jobs/abc', 'demo-token')).toMatchObject({ status: 400, body: { error: 'job_id is invalid' } });
  });
});

describe('job actions', () => {
  let own: GitlabSandbox;

  beforeAll(async () => {
    own = await startGitlabSandbox({ clock: 'manual' });
  });

  afterAll(async () => {
    await own.close();
  });

  it('cancels a running job (201), leaves a finished one as it is, needs Developer', async () => {
    expect(await post('/projects/6/jobs/4002/cancel', 'bob-token', own)).toMatchObject({ status: 403 });
    const canceled = await post('/projects/1/jobs/1013/cancel', 'demo-token', own);
    expect(canceled.status).toBe(201);
    expect(json(canceled)).toMatchObject({ id: 1013, status: 'canceled' });
    expect(json(canceled).finished_at).toBe(new Date(own.now()).toISOString());
    expect(json(await post('/projects/1/jobs/1001/cancel', 'demo-token', own))).toMatchObject({ status: 'success' });
  });

  it('retries into a new pending job and refuses jobs that are not retryable', async () => {
    const retried = await post('/projects/1/jobs/1010/retry', 'demo-token', own);
    expect(retried.status).toBe(201);
    const job = json(retried);
    expect(job.id).not.toBe(1010);
    expect(job).toMatchObject({ name: 'rspec', status: 'pending', started_at: null, finished_at: null, duration: null, user: { username: 'demo' } });
    const pipeline = items(await get('/projects/1/pipelines/103/jobs', 'demo-token', {}, own));
    expect(pipeline.map((j) => [j.id, j.status])).toEqual([
      [1009, 'success'],
      [1011, 'created'],
      [job.id, 'pending'],
    ]);
    expect(items(await get('/projects/1/pipelines/103/jobs?include_retried=true', 'demo-token', {}, own)).map((j) => j.id)).toContain(1010);
    expect(await post('/projects/1/jobs/1014/retry', 'demo-token', own)).toMatchObject({
      status: 403,
      body: { message: '403 Forbidden - Job is not retryable' },
    });
  });

  it('plays a manual job: 200 and pending, 400 for a job that is not manual', async () => {
    const played = await post('/projects/1/jobs/1005/play', 'demo-token', own);
    expect(played.status).toBe(200);
    expect(json(played)).toMatchObject({ id: 1005, status: 'pending', started_at: null, finished_at: null, duration: null });
    expect(await post('/projects/1/jobs/1005/play', 'demo-token', own)).toMatchObject({ status: 400, body: { message: '400 Bad request - Unplayable Job' } });
  });

  it("shows the spec's `started` from play with playStatus 'started'", async () => {
    const legacy = await startGitlabSandbox({ clock: 'manual', playStatus: 'started' });
    try {
      const played = json(await post('/projects/1/jobs/1005/play', 'demo-token', legacy));
      expect(played.status).toBe('started');
      // The job itself is queued as pending: `started` was never a stored job status.
      expect(json(await get('/projects/1/jobs/1005', 'demo-token', {}, legacy)).status).toBe('pending');
    } finally {
      await legacy.close();
    }
  });

  it('erases for Maintainers or the job user, removing archive and trace', async () => {
    // demo is a Developer of platform/core; 1001 was run by alice.
    expect(await post('/projects/1/jobs/1001/erase', 'demo-token', own)).toMatchObject({ status: 403 });
    const erased = await post('/projects/1/jobs/1001/erase', 'bob-token', own);
    expect(erased.status).toBe(201);
    expect(json(erased)).toMatchObject({ artifacts: [], download_url: null, erased_at: new Date(own.now()).toISOString() });
    expect(json(erased)).not.toHaveProperty('artifacts_file');
    expect((await get('/projects/1/jobs/1001/trace', 'bob-token', {}, own)).raw.length).toBe(0);
    expect((await get('/projects/1/jobs/1001/artifacts', 'bob-token', {}, own)).status).toBe(404);
    expect(await post('/projects/1/jobs/1001/erase', 'bob-token', own)).toMatchObject({
      status: 403,
      body: { message: '403 Forbidden - Job is not erasable!' },
    });
    // A job demo retried is demo's own: a Developer may erase it once it has finished.
    expect((await post('/projects/1/jobs/1009/erase', 'demo-token', own)).status).toBe(403);
    const mine = json(await post('/projects/1/jobs/1002/retry', 'demo-token', own));
    own.advance(2 * STEP_MS);
    expect(json(await get(`/projects/1/jobs/${mine.id as number}`, 'demo-token', {}, own)).status).toBe('success');
    expect((await post(`/projects/1/jobs/${mine.id as number}/erase`, 'demo-token', own)).status).toBe(201);
  });

  it('keeps artifacts (200, no expiry) and 404s a job without any', async () => {
    const kept = await post('/projects/1/jobs/1012/artifacts/keep', 'demo-token', own);
    expect(kept.status).toBe(200);
    expect(json(kept)).toMatchObject({ artifacts_expire_at: null, download_url: null });
    expect((await post('/projects/1/jobs/1002/artifacts/keep', 'demo-token', own)).status).toBe(404);
  });

  it('deletes artifacts for Maintainers only (204)', async () => {
    expect(await call('DELETE', '/projects/1/jobs/1006/artifacts', 'demo-token', {}, own)).toMatchObject({ status: 403 });
    const deleted = await call('DELETE', '/projects/1/jobs/1006/artifacts', 'bob-token', {}, own);
    expect(deleted.status).toBe(204);
    expect(deleted.raw.length).toBe(0);
    expect((await get('/projects/1/jobs/1006/artifacts', 'bob-token', {}, own)).status).toBe(404);
    expect((await get('/projects/1/jobs/1006/trace', 'bob-token', {}, own)).raw.length).toBeGreaterThan(0);
  });
});

describe('the manual clock', () => {
  let clocked: GitlabSandbox;

  beforeAll(async () => {
    clocked = await startGitlabSandbox({ clock: 'manual' });
  });

  afterAll(async () => {
    await clocked.close();
  });

  const statuses = async (pipeline: number, project = 1): Promise<string[]> =>
    items(await get(`/projects/${project}/pipelines/${pipeline}/jobs`, 'admin-token', {}, clocked)).map((job) => `${job.id as number}:${job.status as string}`);

  it('moves nothing until advance(), then one step per STEP_MS', async () => {
    const start = await statuses(104);
    expect(start).toEqual(['1012:success', '1013:running', '1014:pending', '1015:created', '1016:created']);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await statuses(104)).toEqual(start);
    clocked.advance(STEP_MS - 1);
    expect(await statuses(104)).toEqual(start);
    clocked.advance(1);
    expect(await statuses(104)).toEqual(['1012:success', '1013:success', '1014:running', '1015:created', '1016:created']);
    expect(await statuses(105)).toEqual(['1017:pending', '1018:pending', '1019:scheduled', '1020:canceled']);
    clocked.advance(STEP_MS);
    expect(await statuses(104)).toEqual(['1012:success', '1013:success', '1014:failed', '1015:pending', '1016:manual']);
    clocked.advance(2 * STEP_MS);
    expect(await statuses(104)).toEqual(['1012:success', '1013:success', '1014:failed', '1015:success', '1016:manual']);
    const pipeline = json(await get('/projects/1/jobs/1015', 'admin-token', {}, clocked)).pipeline as Json;
    expect(pipeline.status).toBe('success');
    // 104 is now the latest successful main pipeline: its build wins the by-ref download.
    const byRef = await get('/projects/1/jobs/artifacts/main/raw/build/summary.txt?job=build', 'admin-token', {}, clocked);
    expect(byRef.raw.toString()).toBe('Job 1012 (build) in stage build succeeded.\n');
  });

  it('skips later stages after a failure and fills the trace as the job runs', async () => {
    expect(await statuses(202, 7)).toEqual(['2003:failed', '2004:skipped', '2005:skipped']);
    const trace = (await get('/projects/7/jobs/2003/trace', 'demo-token', {}, clocked)).raw.toString();
    expect(trace).toContain('Running with gitlab-runner');
    expect(trace.trimEnd().endsWith('ERROR: Job failed: exit code 1')).toBe(true);
    expect(json(await get('/projects/7/jobs/2003', 'demo-token', {}, clocked)).failure_reason).toBe('script_failure');
  });
});

describe('traces and artifacts', () => {
  it('serves the trace as text/plain, and an empty body for a job without one', async () => {
    const trace = await get('/projects/1/jobs/1010/trace', 'demo-token');
    expect(trace.status).toBe(200);
    expect(trace.headers.get('content-type')).toBe('text/plain');
    expect(trace.headers.get('content-disposition')).toBe('infile; filename="1010.log"');
    expect(trace.raw.toString()).toContain('ERROR: Job failed: exit code 1');
    const none = await get('/projects/1/jobs/1005/trace', 'demo-token');
    expect(none.status).toBe(200);
    expect(none.raw.length).toBe(0);
    expect((await get('/projects/1/jobs/9999/trace', 'demo-token')).status).toBe(404);
    expect((await get('/projects/1/jobs/1010/trace')).status).toBe(401);
  });

  it('serves a valid zip whose entries, sizes and CRCs match the job record', async () => {
    const reply = await get('/projects/1/jobs/1001/artifacts', 'demo-token');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/zip');
    expect(reply.headers.get('content-disposition')).toBe('attachment; filename="artifacts.zip"; filename*=UTF-8\'\'artifacts.zip');
    const size = (json(await get('/projects/1/jobs/1001', 'demo-token')).artifacts_file as Json).size;
    expect(reply.raw.length).toBe(size);
    const entries = readZip(reply.raw);
    expect(entries.map((e) => e.name)).toEqual(['dist/app.js', 'dist/app.css', 'dist/index.html', 'coverage/summary.json', 'README.txt']);
    for (const entry of entries) {
      expect(entry.data.length).toBe(entry.size);
      expect(crc32(entry.data)).toBe(entry.crc);
    }
    expect(entries[0]?.data.toString()).toBe('console.log("core 1.2.0");\n');
  });

  it('serves one file of the archive, 400 for a path out of it, 404 for a missing one', async () => {
    const file = await get('/projects/1/jobs/1001/artifacts/dist/app.js', 'demo-token');
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(file.raw.toString()).toBe('console.log("core 1.2.0");\n');
    expect((await get('/projects/1/jobs/1001/artifacts/dist%2Findex.html', 'demo-token')).raw.toString()).toContain('<title>Core</title>');
    expect(await get('/projects/1/jobs/1001/artifacts/..%2Fx', 'demo-token')).toMatchObject({ status: 400, body: { message: '400 Bad request' } });
    expect(await get('/projects/1/jobs/1001/artifacts/dist/nothing.js', 'demo-token')).toMatchObject({ status: 404, body: { message: '404 Not Found' } });
    expect((await get('/projects/1/jobs/1002/artifacts', 'demo-token')).status).toBe(404);
  });

  it('downloads by ref from the latest successful pipeline, including tags and refs with a slash', async () => {
    const archive = await get('/projects/1/jobs/artifacts/main/download?job=build', 'demo-token');
    expect(archive.status).toBe(200);
    expect(readZip(archive.raw).map((e) => e.name)).toContain('dist/app.js');
    const tagged = await get('/projects/platform%2Fcore/jobs/artifacts/v1.2.0/raw/build/summary.txt?job=build', 'demo-token');
    expect(tagged.raw.toString()).toBe('Job 1006 (build) in stage build succeeded.\n');
    expect(await get('/projects/1/jobs/artifacts/main/download', 'demo-token')).toMatchObject({ status: 400, body: { error: 'job is missing' } });
    expect(await get('/projects/1/jobs/artifacts/main/download?job=nothing', 'demo-token')).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect((await get('/projects/1/jobs/artifacts/feature%2Flogin/download?job=lint', 'demo-token')).status).toBe(404);
  });

  it('accepts a CI job token as JOB-TOKEN or job_token, lets anonymous callers read public projects only', async () => {
    expect((await get('/projects/1/jobs/1001/artifacts', undefined, { 'JOB-TOKEN': SEED_JOB_TOKEN })).status).toBe(200);
    expect((await get(`/projects/2/jobs/3001/artifacts?job_token=${SEED_JOB_TOKEN}`)).status).toBe(200);
    expect(await get('/projects/2/jobs/3001/artifacts', undefined, { 'JOB-TOKEN': 'wrong' })).toMatchObject({
      status: 401,
      body: { message: '401 Unauthorized' },
    });
    expect((await get('/projects/1/jobs/1001/artifacts')).status).toBe(200);
    expect((await get('/projects/2/jobs/3001/artifacts')).status).toBe(404);
    // Job tokens work on artifact downloads only.
    expect((await get('/projects/2/jobs/3001', undefined, { 'JOB-TOKEN': SEED_JOB_TOKEN })).status).toBe(401);
  });
});

describe('a large generated archive', () => {
  const SIZE = 50 * 1_048_576;
  let large: GitlabSandbox;

  beforeAll(async () => {
    large = await startGitlabSandbox({ clock: 'manual', largeArtifactBytes: SIZE });
  });

  afterAll(async () => {
    await large.close();
  });

  // A forced collection between samples, so the measures show what is retained, not garbage not yet collected.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;

  /**
   * Streams a download and counts its bytes without keeping them; every
   * 4 MiB it collects garbage and samples RSS and live Buffer memory.
   * Returns the head and tail for the zip headers and trailer.
   */
  function countDownload(
    path: string,
  ): Promise<{ status: number; length: string | undefined; bytes: number; head: Buffer; tail: Buffer; peakRss: number; peakBuffers: number }> {
    return new Promise((resolve, reject) => {
      const req = httpGet(`${large.url}/api/v4${path}`, { headers: { 'Private-Token': 'demo-token' } }, (res) => {
        let bytes = 0;
        let head = Buffer.alloc(0);
        let tail = Buffer.alloc(0);
        let peakRss = process.memoryUsage.rss();
        let peakBuffers = process.memoryUsage().arrayBuffers;
        let sampledAt = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes - sampledAt >= 4 * 1_048_576) {
            sampledAt = bytes;
            gc();
            const usage = process.memoryUsage();
            peakRss = Math.max(peakRss, usage.rss);
            peakBuffers = Math.max(peakBuffers, usage.arrayBuffers);
          }
          if (head.length < 64) head = Buffer.from(Buffer.concat([head, chunk]).subarray(0, 64));
          // Copies of at most 256 bytes: the test must not itself hold on to the download.
          tail = chunk.length >= 256 ? Buffer.from(chunk.subarray(-256)) : Buffer.from(Buffer.concat([tail, chunk]).subarray(-256));
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, length: res.headers['content-length'], bytes, head, tail, peakRss, peakBuffers }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('streams the 50 MB archive chunk by chunk while memory stays far below its size', async () => {
    const job = json(await get(`/projects/1/jobs/${LARGE_ARTIFACT_JOB_ID}`, 'demo-token', {}, large));
    gc();
    const before = process.memoryUsage();
    const download = await countDownload(`/projects/1/jobs/${LARGE_ARTIFACT_JOB_ID}/artifacts`);
    expect(download.status).toBe(200);
    expect(download.bytes).toBe((job.artifacts_file as Json).size);
    expect(download.length).toBe(String(download.bytes));
    expect(download.bytes).toBeGreaterThan(SIZE);
    expect(download.peakRss - before.rss).toBeLessThan(SIZE / 2);
    // Holding the archive would need all of SIZE; a streamed download keeps a few chunks in flight.
    expect(download.peakBuffers - before.arrayBuffers).toBeLessThan(SIZE / 4);
    // The trailer points at one stored entry of exactly SIZE bytes.
    const end = download.tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    expect(download.tail.readUInt16LE(end + 10)).toBe(1);
    expect(download.head.readUInt32LE(0)).toBe(0x04034b50);
    expect(download.head.readUInt32LE(22)).toBe(SIZE);
    expect(download.head.subarray(30, 30 + LARGE_ARTIFACT_PATH.length).toString()).toBe(LARGE_ARTIFACT_PATH);
  });

  it('streams the generated file alone from the archive', async () => {
    const download = await countDownload(`/projects/1/jobs/${LARGE_ARTIFACT_JOB_ID}/artifacts/${LARGE_ARTIFACT_PATH}`);
    expect(download.bytes).toBe(SIZE);
    expect(download.head.toString().startsWith('duograph sandbox generated artifact data')).toBe(true);
  });

  it('writes a CRC that matches the generated data', async () => {
    const small = await startGitlabSandbox({ clock: 'manual', largeArtifactBytes: 200_000 });
    try {
      const [entry] = readZip((await get(`/projects/1/jobs/${LARGE_ARTIFACT_JOB_ID}/artifacts`, 'demo-token', {}, small)).raw);
      expect(entry?.name).toBe(LARGE_ARTIFACT_PATH);
      expect(entry?.method).toBe(0);
      expect(entry?.data.length).toBe(200_000);
      expect(crc32(entry?.data ?? Buffer.alloc(0))).toBe(entry?.crc);
    } finally {
      await small.close();
    }
  });
});
