/**
 * Live job logs: one watch per job and credential scope, however many
 * subscribe. The watch polls the log (through the shared poller registry,
 * so it backs off while the log is quiet) and reads only what is new:
 * `Range: bytes=<offset>-` where the server honours it (206), else the
 * whole log with the bytes already sent skipped as they stream by (GitLab's
 * API answers 200 to every Range). Nothing is kept but the offset and the
 * parser's small state: each read is cut into chunks and handed to the
 * subscribers as it arrives.
 *
 * GitLab's trace route ignores Range, but its answer is a plain string body,
 * so Rails' Rack::ETag gives it a weak ETag (lib/api/ci/jobs.rb: `body
 * trace`): the watch asks again with If-None-Match, and a quiet log costs a
 * 304 without a body. A growing log still costs the whole log per read, so
 * the watch polls it no more often than LOG_READ_BYTES_PER_SECOND allows:
 * one watched job never reads more than that per second, and a change shows
 * at worst after max(POLL_INTERVAL_MS, log size / LOG_READ_BYTES_PER_SECOND).
 *
 * A subscriber first reads the log up to the watch's offset with its own
 * credentials (the access check; the whole content, or only the last lines
 * it asked for), then gets the watch's chunks from that offset on: no gap,
 * no repeat. When the log stops growing, the watch reads the job; once the
 * job is finished the subscribers get a last chunk marked complete (what
 * was written since the last read, empty when nothing was), and their
 * streams end. The watch stops with its last subscriber. A job already
 * finished at the subscription needs no watch: its log, the last chunk
 * marked complete.
 */
import { UpstreamError } from '../errors.js';
import type { GitlabClient } from '../upstreams/gitlab/client.js';
import { isAccessFailure, notVisible } from './channels.js';
import { LogParser, type ParsedChunk } from './log-parser.js';
import type { PollerRegistry, PollOutcome, PollTask } from './pollers.js';
import type { Credentials } from './scope.js';

/** Largest chunk handed to a subscriber, in bytes: a read of 100 MB goes out in pieces this size. */
export const LOG_CHUNK_BYTES = 64 * 1024;
/** Bytes a watch may read per second from a server that sends the whole log each time, by default (LOG_READ_BYTES_PER_SECOND): 1 MiB, so a 10 MB log is read at most every 10 s. */
export const LOG_READ_BYTES_PER_SECOND = 1024 * 1024;
/** Chunks a subscriber may fall behind by before its stream ends with an error. */
const MAX_QUEUED_CHUNKS = 512;
/** Job statuses after which a log does not grow any more. */
const FINISHED = new Set(['success', 'failed', 'canceled', 'skipped']);

export interface LogChunk extends ParsedChunk {
  jobId: number;
  /** True on the last chunk: the job finished and its log is complete. */
  complete: boolean;
  /** The job's status on the last chunk; null before. */
  status: string | null;
}

export interface LogWatchRequest {
  projectId: number;
  jobId: number;
  /** Only the last lines of the current log first, instead of all of it. */
  tailLines: number | null;
}

/** What a log watch needs of the hub. */
export interface LogHubView {
  readonly pollers: PollerRegistry;
  /** Bytes a watch may read per second from a server that sends the whole log; 0 = no bound. */
  readonly logReadBytesPerSecond: number;
  scopeClient(credentials: Credentials): GitlabClient;
}

/** Drops a body not read to its end; the abort undici then reports on it is expected, not a failure. */
function discard(body: { on(event: 'error', listener: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => {});
  body.destroy();
}

/** What a whole read of the log learned: its ETag and size, when the server sent all of it. */
interface WholeRead {
  etag?: string;
  /** Bytes of the whole log, when the answer was the whole log (200) and was read to its end. */
  size?: number;
  /** The server answered 304: nothing changed since the ETag sent. */
  unchanged?: boolean;
}

/**
 * The log from byte `from` (to `until`, when given), in pieces of at most
 * LOG_CHUNK_BYTES as they arrive: ranged where the server honours Range,
 * else the whole log with the bytes before `from` skipped as they stream by.
 * With `seen`, its ETag goes as If-None-Match, and what the read learned
 * comes back in it. A consumer that stops early drops the rest of the body.
 */
async function* readLog(client: GitlabClient, projectId: number, jobId: number, from: number, until: number | null, seen?: WholeRead): AsyncGenerator<Buffer> {
  const range = until === null ? `bytes=${from}-` : `bytes=${from}-${until - 1}`;
  const response = await client.download(['projects', projectId, 'jobs', jobId, 'trace'], {}, from === 0 && until === null ? undefined : range, seen?.etag);
  const path = `/api/v4/projects/${projectId}/jobs/${jobId}/trace`;
  if (seen) {
    seen.unchanged = response.status === 304;
    seen.size = undefined;
  }
  if (response.status === 416 || response.status === 304) {
    discard(response.body);
    return;
  }
  if (response.status >= 300) {
    // Nothing GitLab wrote goes on: the status says enough.
    await response.body.text().catch(() => '');
    if (response.status === 404 || response.status === 403 || response.status === 401) throw notVisible(`The log of job ${jobId}`, path);
    throw new UpstreamError(`GitLab answered ${response.status}.`, 'UPSTREAM_ERROR', { name: 'gitlab', status: response.status, method: 'GET', path });
  }
  let position = response.status === 206 ? from : 0;
  try {
    for await (const piece of response.body) {
      let bytes = piece as Buffer;
      if (position < from) {
        const skip = Math.min(bytes.length, from - position);
        position += skip;
        bytes = bytes.subarray(skip);
      }
      if (until !== null && position + bytes.length > until) bytes = bytes.subarray(0, Math.max(0, until - position));
      for (let at = 0; at < bytes.length; at += LOG_CHUNK_BYTES) {
        const slice = bytes.subarray(at, at + LOG_CHUNK_BYTES);
        position += slice.length;
        yield slice;
      }
      if (until !== null && position >= until) return;
    }
    // Read to its end: a whole log's ETag and size describe what the watch now holds.
    if (seen && response.status === 200) {
      seen.etag = response.headers.etag;
      seen.size = position;
    }
  } finally {
    discard(response.body);
  }
}

/**
 * Bytes [0, until) of the log (all of it when until is null) as chunks, each
 * handed on as it is read, or their last `tailLines` lines as one.
 */
async function* logSoFar(client: GitlabClient, projectId: number, jobId: number, until: number | null, tailLines: number | null): AsyncGenerator<ParsedChunk> {
  if (until === 0) return;
  const parser = new LogParser();
  const tail: string[] = [];
  let lineStart = 0;
  let partial = '';
  for await (const bytes of readLog(client, projectId, jobId, 0, until)) {
    const chunk = parser.feed(bytes);
    if (!chunk) continue;
    if (tailLines === null) {
      yield chunk;
      continue;
    }
    // Keep only the last lines, and where the first of them starts.
    const lines = (partial + chunk.raw).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      tail.push(line);
      if (tail.length > tailLines) lineStart += Buffer.byteLength(`${tail.shift() ?? ''}\n`);
    }
  }
  if (tailLines === null) return;
  if (partial !== '') tail.push(partial);
  while (tail.length > tailLines) lineStart += Buffer.byteLength(`${tail.shift() ?? ''}\n`);
  const raw = tail.join('\n') + (partial === '' && tail.length > 0 ? '\n' : '');
  const lastLines = new LogParser();
  lastLines.offset = lineStart;
  const chunk = lastLines.feed(Buffer.from(raw));
  if (chunk) yield chunk;
}

/**
 * The log of a job that already finished (or its last lines), its last chunk
 * marked complete with the job's status: no watch, nothing polled, and the
 * last chunk a client shows is the end of the log.
 */
export async function* finishedLog(client: GitlabClient, projectId: number, jobId: number, tailLines: number | null, status: string): AsyncGenerator<LogChunk> {
  let held: ParsedChunk | null = null;
  for await (const chunk of logSoFar(client, projectId, jobId, null, tailLines)) {
    if (held) yield { ...held, jobId, complete: false, status: null };
    held = chunk;
  }
  yield { ...(held ?? { offset: 0, raw: '', text: '', sections: [] }), jobId, complete: true, status };
}

/** Whether a job in this status writes no more to its log. */
export function logFinished(status: string): boolean {
  return FINISHED.has(status);
}

/** One subscriber's queue of live chunks. */
class LogSink {
  readonly queue: (LogChunk | Error)[] = [];
  private wake: (() => void) | null = null;
  closed = false;

  constructor(readonly start: number) {}

  push(item: LogChunk | Error): void {
    if (this.closed) return;
    if (this.queue.length >= MAX_QUEUED_CHUNKS && !(item instanceof Error)) {
      this.queue.push(new Error('The subscriber fell too far behind the job log; subscribe again.'));
      this.closed = true;
    } else this.queue.push(item);
    this.wake?.();
  }

  next(): Promise<void> {
    return this.queue.length > 0 ? Promise.resolve() : new Promise((resolve) => (this.wake = resolve));
  }
}

export class LogWatch implements PollTask {
  private readonly parser = new LogParser();
  private readonly sinks = new Set<LogSink>();
  private release: (() => void) | null = null;
  private stopped = false;
  /** The last chunk, once the job finished. */
  private final: LogChunk | null = null;
  /** The first read: where the first subscribers start. */
  readonly ready: Promise<void>;
  /** The last whole read's ETag and size. */
  private readonly seen: WholeRead = {};

  constructor(
    private readonly hub: LogHubView,
    readonly key: string,
    private readonly credentials: Credentials,
    private readonly projectId: number,
    private readonly jobId: number,
    private readonly onStop: () => void,
  ) {
    this.ready = this.read().then(() => undefined);
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  get subscribers(): number {
    return this.sinks.size;
  }

  /** A subscriber's stream: the log up to now (or its last lines), read with its own client, then every new chunk. */
  async *subscribe(client: GitlabClient, tailLines: number | null, signal?: AbortSignal): AsyncGenerator<LogChunk | Error> {
    await this.ready;
    if (this.stopped) {
      // The job finished while this subscriber was on its way: its whole log, then the end.
      if (!this.final) throw new Error('The job log watch ended; subscribe again.');
      for await (const chunk of logSoFar(client, this.projectId, this.jobId, this.final.offset, tailLines)) yield this.live(chunk);
      yield this.final;
      return;
    }
    const sink = new LogSink(this.parser.offset);
    this.sinks.add(sink);
    this.release ??= this.hub.pollers.acquire(`log:${this.key}`, () => this);
    const onAbort = () => sink.push(new Error('aborted'));
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const chunk of logSoFar(client, this.projectId, this.jobId, sink.start, tailLines)) yield this.live(chunk);
      for (;;) {
        await sink.next();
        const item = sink.queue.shift();
        if (!item) continue;
        if (item instanceof Error) {
          if (item.message !== 'aborted') yield item;
          return;
        }
        yield item;
        if (item.complete) return;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      sink.closed = true;
      this.sinks.delete(sink);
      if (this.sinks.size === 0) this.stop();
    }
  }

  private live(chunk: ParsedChunk): LogChunk {
    return { ...chunk, jobId: this.jobId, complete: false, status: null };
  }

  /** Reads what is new and hands it on; true when there was something. */
  private async read(): Promise<boolean> {
    const last = await this.readHoldingLast();
    if (last) for (const sink of this.sinks) sink.push(this.live(last));
    return last !== null;
  }

  /** Reads what is new and hands on all but its last chunk, which it returns (null when nothing was new). */
  private async readHoldingLast(): Promise<ParsedChunk | null> {
    const client = this.hub.scopeClient(this.credentials);
    let held: ParsedChunk | null = null;
    for await (const bytes of readLog(client, this.projectId, this.jobId, this.parser.consumed, null, this.seen)) {
      if (this.stopped) break;
      const chunk = this.parser.feed(bytes);
      if (!chunk) continue;
      if (held) for (const sink of this.sinks) sink.push(this.live(held));
      held = chunk;
    }
    return held;
  }

  /** The least time between two reads: a whole-log read (the server ignores Range) may cost at most LOG_READ_BYTES_PER_SECOND. */
  minIntervalMs(): number {
    const budget = this.hub.logReadBytesPerSecond;
    return this.seen.size === undefined || budget === 0 ? 0 : Math.ceil((this.seen.size / budget) * 1000);
  }

  async poll(): Promise<PollOutcome> {
    if (this.stopped) return 'skipped';
    try {
      if (await this.read()) return 'changed';
      // A quiet log: has the job finished?
      const job = await this.hub.scopeClient(this.credentials).getJob(this.projectId, this.jobId);
      if (!job) throw notVisible(`Job ${this.jobId} of project ${this.projectId}`, `/api/v4/projects/${this.projectId}/jobs/${this.jobId}`);
      if (!FINISHED.has(job.status)) return 'unchanged';
      // Its last words may have landed between the read and the job's status: they are the last chunk, so a
      // client that shows only the latest event (GraphiQL) ends on the end of the log, not on an empty chunk.
      const words = await this.readHoldingLast();
      const last: LogChunk = {
        ...(words ?? { offset: this.parser.offset, raw: '', text: '', sections: [] }),
        jobId: this.jobId,
        complete: true,
        status: job.status,
      };
      this.final = last;
      for (const sink of this.sinks) sink.push(last);
      this.stop();
      return 'changed';
    } catch (error) {
      if (isAccessFailure(error)) {
        for (const sink of this.sinks) sink.push(error as Error);
        this.stop();
      }
      throw error;
    }
  }

  /** Ends the watch: its poller, and its place in the hub. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    // Subscribers still waiting (the server is closing) end quietly; those that got the last chunk or an error have ended already.
    for (const sink of this.sinks) sink.push(new Error('aborted'));
    this.release?.();
    this.release = null;
    this.onStop();
  }
}
