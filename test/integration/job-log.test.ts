/**
 * jobLogAppended end to end: the sandbox writes a running job's log line by
 * line on its manual clock, and real graphql-sse and graphql-ws clients
 * follow it. The chunks must join into exactly the log GitLab serves at the
 * end (no gap, no repeat), whether the server honours Range (only the new
 * bytes are read) or sends the whole log each time (as GitLab's API does).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { STEP_MS } from '../../src/sandbox/gitlab/server.js';
import { credentialScope } from '../../src/subscriptions/scope.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectAllReleased, type Reader, type Result, sseSubscribe, wsClient, wsSubscribe } from '../helpers/subscriptions.js';

const WATCH = `subscription ($projectId: ID!, $jobId: ID!, $tailLines: Int) {
  jobLogAppended(projectId: $projectId, jobId: $jobId, tailLines: $tailLines) {
    jobRestId offset raw text complete status sections { name startedAt endedAt duration lines } } }`;

interface Chunk {
  jobRestId: number;
  offset: number;
  raw: string;
  text: string;
  complete: boolean;
  status: string | null;
  sections: { name: string; startedAt: string; endedAt: string | null; duration: number | null; lines: string[] }[];
}
const chunk = (r: Result) => r.data?.jobLogAppended as Chunk;

/** Reads chunks until the one marked complete; checks each starts where the last ended, the first at `from`. */
async function readToEnd(sub: Reader, advance: () => void, from = 0): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  let expected = from;
  for (let i = 0; i < 200; i++) {
    // Every advance writes more of the log, or ends the job: there is always a next chunk.
    advance();
    const next = await sub.next();
    expect(next.errors).toBeUndefined();
    const c = chunk(next);
    expect(c.offset, 'a gap or a repeat').toBe(expected);
    expected += Buffer.byteLength(c.raw);
    chunks.push(c);
    if (c.complete) return chunks;
  }
  throw new Error('the log never completed');
}

async function fullLog(t: TestApp, jobId: number): Promise<string> {
  const res = await fetch(`${t.sandbox.url}/api/v4/projects/1/jobs/${jobId}/trace`, { headers: { 'private-token': 'demo-token' } });
  return res.text();
}

let t: TestApp;
afterEach(async () => {
  await expectAllReleased(t);
  await t.close();
});

describe('jobLogAppended', () => {
  it('asks again for a quiet log with If-None-Match: GitLab answers 304 without a body, and the next growth arrives once', async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
    const trace = '/api/v4/projects/1/jobs/1013/trace';
    // The sandbox's trace answer carries GitLab's weak ETag, and a 304 to it (Rack::ETag and Rack::ConditionalGet).
    const direct = await fetch(`${t.sandbox.url}${trace}`, { headers: { 'private-token': 'demo-token' } });
    const etag = direct.headers.get('etag') ?? '';
    expect(etag).toMatch(/^W\/"[0-9a-f]{32}"$/);
    const again = await fetch(`${t.sandbox.url}${trace}`, { headers: { 'private-token': 'demo-token', 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    t.resetCalls();
    const sub = sseSubscribe(t, WATCH, { projectId: 'platform/core', jobId: 'gid://duograph/Job/1/1013' });
    const first = chunk(await sub.next());
    expect(first.offset).toBe(0);
    // The log is quiet (the clock stands): the watch revalidates it, and GitLab sends no body.
    await vi.waitFor(() => expect(t.calls({ path: trace }).filter((c) => c.headers['if-none-match'] === etag).length).toBeGreaterThanOrEqual(2));
    const metrics = await (await fetch(new URL('/metrics', t.url))).text();
    expect(metrics).toMatch(/duograph_upstream_requests_total\{[^}]*route="\/projects\/:param\/jobs\/:param\/trace",status="304"\} [1-9]/);
    t.sandbox.advance(900);
    const next = chunk(await sub.next());
    expect(next.offset).toBe(Buffer.byteLength(first.raw));
    await sub.stop();
  });

  it('reads a whole log no more often than LOG_READ_BYTES_PER_SECOND allows, and as often as it likes at 0', async () => {
    const key = `log:${credentialScope({ 'private-token': 'demo-token' })}|1|1013`;
    const trace = '/api/v4/projects/1/jobs/1013/trace';
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40', LOG_READ_BYTES_PER_SECOND: '100' } });
    const sub = sseSubscribe(t, WATCH, { projectId: '1', jobId: '1013' });
    const size = Buffer.byteLength(chunk(await sub.next()).raw);
    // Once the watch has read the whole log, its next read waits until that many bytes fit 100 a second.
    await vi.waitFor(() => expect(t.app.hub.pollers.dueIn(key)).toBeGreaterThan(40));
    const due = t.app.hub.pollers.dueIn(key) ?? 0;
    expect(due).toBeLessThanOrEqual(Math.ceil((size / 100) * 1000));
    expect(due).toBeGreaterThan(Math.ceil((size / 100) * 1000) - 5_000);
    expect(t.calls({ path: trace }).filter((c) => c.headers['if-none-match'])).toHaveLength(0);
    await sub.stop();
    await expectAllReleased(t);
    await t.close();
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40', LOG_READ_BYTES_PER_SECOND: '0' } });
    const unbounded = sseSubscribe(t, WATCH, { projectId: '1', jobId: '1013' });
    await unbounded.next();
    // No bound: the quiet log is asked for again at the poll interval.
    await vi.waitFor(() => expect(t.calls({ path: trace }).filter((c) => c.headers['if-none-match']).length).toBeGreaterThanOrEqual(3));
    await unbounded.stop();
  });

  it('streams a running log chunk by chunk to its end over SSE, with whole reads as GitLab serves them', async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
    const sub = sseSubscribe(t, WATCH, { projectId: 'platform/core', jobId: 'gid://duograph/Job/1/1013' });
    const first = chunk(await sub.next());
    expect(first.offset).toBe(0);
    expect(first.text).toContain('Running with gitlab-runner');
    expect(first.raw).toContain('\u001b[');
    let expected = Buffer.byteLength(first.raw);
    t.sandbox.advance(900);
    const grown: Chunk[] = [];
    while (!grown.some((c) => c.text.includes('step 13 of the script'))) {
      const c = chunk(await sub.next());
      expect(c.offset).toBe(expected);
      expected += Buffer.byteLength(c.raw);
      grown.push(c);
    }
    // The section started before these lines: they are its lines, without colours.
    const section = grown.flatMap((c) => c.sections).find((s) => s.name === 'run_rspec');
    expect(section?.lines).toContain('✓ rspec: step 13 of the script (ünïcode ok)');
    expect(section?.endedAt).toBeNull();
    const rest = await readToEnd(sub, () => t.sandbox.advance(STEP_MS), expected);
    const all = [first, ...grown, ...rest];
    const last = all.at(-1);
    expect(last?.complete).toBe(true);
    expect(last?.status).toBe('SUCCESS');
    expect(all.map((c) => c.raw).join('')).toBe(await fullLog(t, 1013));
    const ended = all.flatMap((c) => c.sections).find((s) => s.name === 'run_rspec' && s.endedAt !== null);
    expect(ended?.duration).toBeGreaterThan(0);
    expect(await sub.completes()).toBe(true);
  });

  it('reads only the new bytes where the server honours Range, over graphql-ws, and joins into the same log', async () => {
    t = await createTestApp({ sandbox: { clock: 'manual', traceRanges: true }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
    const client = wsClient(t);
    const sub = wsSubscribe(client, WATCH, { projectId: '1', jobId: '1013' });
    const chunks = await readToEnd(sub, () => t.sandbox.advance(600));
    expect(chunks.map((c) => c.raw).join('')).toBe(await fullLog(t, 1013));
    const traceCalls = t.calls({ path: '/api/v4/projects/1/jobs/1013/trace' });
    const ranged = traceCalls.filter((c) => /^bytes=\d+-$/.test(c.headers.range ?? ''));
    expect(ranged.length).toBeGreaterThan(0);
    // Every poll after the first read asks from where the last one ended.
    expect(ranged.every((c) => Number(/\d+/.exec(c.headers.range ?? '')?.[0]) > 0)).toBe(true);
    await client.dispose();
  });

  it('goes on without a gap or a repeat when the server stops honouring Range halfway, and again when it starts', async () => {
    t = await createTestApp({ sandbox: { clock: 'manual', traceRanges: true }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
    const sub = sseSubscribe(t, WATCH, { projectId: '1', jobId: '1013' });
    let flips = 0;
    const chunks = await readToEnd(sub, () => {
      // Every other step the server switches between 206 ranges and whole 200 logs.
      t.sandbox.setTraceRanges(flips++ % 2 === 1);
      t.sandbox.advance(600);
    });
    expect(flips).toBeGreaterThan(2);
    expect(chunks.map((c) => c.raw).join('')).toBe(await fullLog(t, 1013));
    const ranges = t.calls({ path: '/api/v4/projects/1/jobs/1013/trace' }).map((c) => c.headers.range ?? '');
    expect(ranges.filter((r) => r !== '').length).toBeGreaterThan(1);
  });

  it('completes when the job is canceled; its retry is a new job whose log starts at 0', async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
    const sub = sseSubscribe(t, WATCH, { projectId: '1', jobId: '1013' });
    expect(chunk(await sub.next()).offset).toBe(0);
    const canceled = await t.gql<{ jobCancel: { job: { status: string } } }>(
      'mutation { jobCancel(input: { id: "gid://duograph/Job/1/1013" }) { job { status } } }',
    );
    expect(canceled.data?.jobCancel.job.status).toBe('CANCELED');
    const rest: Chunk[] = [];
    for (;;) {
      const c = chunk(await sub.next());
      rest.push(c);
      if (c.complete) break;
    }
    expect(rest.at(-1)?.status).toBe('CANCELED');
    expect(await sub.completes()).toBe(true);
    const retried = await t.gql<{ jobRetry: { job: { restId: number } } }>(
      'mutation { jobRetry(input: { id: "gid://duograph/Job/1/1013" }) { job { restId } } }',
    );
    const newId = retried.data?.jobRetry.job.restId ?? 0;
    expect(newId).not.toBe(1013);
    t.sandbox.advance(STEP_MS);
    const again = sseSubscribe(t, WATCH, { projectId: '1', jobId: String(newId) });
    const first = chunk(await again.next());
    expect(first).toMatchObject({ jobRestId: newId, offset: 0 });
    expect(first.text).toContain('Running with gitlab-runner');
    await again.stop();
  });

  it('ends a stream with the old job and its final state when the job is retried while watched', async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
    const sub = sseSubscribe(t, WATCH, { projectId: '1', jobId: '1013' });
    const first = chunk(await sub.next());
    // Canceled and retried at once, before the watch reads again: the retry is a new job, with a log of its own.
    await t.gql('mutation { jobCancel(input: { id: "gid://duograph/Job/1/1013" }) { errors { message } } }');
    const retried = await t.gql<{ jobRetry: { job: { restId: number } } }>(
      'mutation { jobRetry(input: { id: "gid://duograph/Job/1/1013" }) { job { restId } } }',
    );
    expect(retried.data?.jobRetry.job.restId).not.toBe(1013);
    const rest = await readToEnd(sub, () => t.sandbox.advance(STEP_MS), first.offset + Buffer.byteLength(first.raw));
    const all = [first, ...rest];
    expect(all.every((c) => c.jobRestId === 1013)).toBe(true);
    expect(rest.at(-1)).toMatchObject({ complete: true, status: 'CANCELED' });
    expect(all.map((c) => c.raw).join('')).toBe(await fullLog(t, 1013));
    expect(await sub.completes()).toBe(true);
  });

  it('starts with the last lines when asked, at their offset, then goes on', async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
    t.sandbox.advance(1_500);
    const whole = await fullLog(t, 1013);
    const sub = sseSubscribe(t, WATCH, { projectId: '1', jobId: '1013', tailLines: 2 });
    const first = chunk(await sub.next());
    expect(first.raw.trimEnd().split('\n')).toHaveLength(2);
    expect(whole.slice(Buffer.from(whole).subarray(0, first.offset).toString().length)).toBe(first.raw);
    t.sandbox.advance(600);
    const next = chunk(await sub.next());
    expect(next.offset).toBe(first.offset + Buffer.byteLength(first.raw));
    await sub.stop();
  });

  it('costs one read of the log per poll however many watch it, and releases everything when they leave', async () => {
    t = await createTestApp({ sandbox: { clock: 'manual', traceRanges: true }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
    const subs = Array.from({ length: 5 }, () => sseSubscribe(t, WATCH, { projectId: '1', jobId: '1013' }));
    await Promise.all(subs.map((s) => s.next()));
    expect(t.app.hub.stats()).toMatchObject({ pollers: 1, streams: 5 });
    t.resetCalls();
    t.sandbox.advance(300);
    const got = await Promise.all(subs.map(async (s) => chunk(await s.next())));
    expect(new Set(got.map((c) => c.offset)).size).toBe(1);
    // Polls run every 20 ms for all five: a handful of reads, not five per poll.
    const reads = t.calls({ path: '/api/v4/projects/1/jobs/1013/trace' }).length;
    expect(reads).toBeGreaterThan(0);
    expect(reads).toBeLessThan(5);
    await Promise.all(subs.map((s) => s.stop()));
  });

  it("sends a finished job's whole log, then completes", async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
    const sub = sseSubscribe(t, WATCH, { projectId: '1', jobId: '1002' });
    const chunks = await readToEnd(sub, () => undefined);
    expect(chunks.at(-1)).toMatchObject({ complete: true, status: 'SUCCESS' });
    expect(chunks.map((c) => c.raw).join('')).toBe(await fullLog(t, 1002));
  });

  it("sends a finished job's last lines as one chunk marked complete, reading the log once and watching nothing", async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
    const whole = await fullLog(t, 1002);
    t.resetCalls();
    const sub = sseSubscribe(t, WATCH, { projectId: '1', jobId: '1002', tailLines: 3 });
    const only = chunk(await sub.next());
    // A client that shows only the latest event (GraphiQL) ends on the end of the log, not on an empty chunk.
    expect(only).toMatchObject({ complete: true, status: 'SUCCESS' });
    expect(only.raw.trimEnd().split('\n')).toHaveLength(3);
    expect(only.text).toContain('Job succeeded');
    expect(whole.endsWith(only.raw)).toBe(true);
    expect(only.offset).toBe(Buffer.byteLength(whole) - Buffer.byteLength(only.raw));
    expect(await sub.completes()).toBe(true);
    expect(t.calls({ path: '/api/v4/projects/1/jobs/1002/trace' })).toHaveLength(1);
    expect(t.app.hub.stats()).toMatchObject({ pollers: 0 });
  });

  it('refuses a subscriber who cannot read the job, a job of another project, and a bad tail, with the codes a query gets', async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
    const hidden = sseSubscribe(t, WATCH, { projectId: '1', jobId: '1013' }, { 'private-token': 'nobody-token' });
    expect((await hidden.next()).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const other = sseSubscribe(t, WATCH, { projectId: '1', jobId: 'gid://duograph/Job/7/2003' });
    expect((await other.next()).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const missing = sseSubscribe(t, WATCH, { projectId: '1', jobId: '999999' });
    expect((await missing.next()).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const tail = sseSubscribe(t, WATCH, { projectId: '1', jobId: '1013', tailLines: 0 });
    expect((await tail.next()).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('answers a log GitLab fails to serve with UPSTREAM_ERROR, and leaves nothing behind', async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
    t.sandbox.addFault({ path: /\/jobs\/1013\/trace$/, status: 500, body: '{"message":"500 Internal Server Error"}' });
    const sub = sseSubscribe(t, WATCH, { projectId: '1', jobId: '1013' });
    const failed = await sub.next();
    expect(failed.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    expect(JSON.stringify(failed)).not.toContain('Internal Server Error');
  });
});
