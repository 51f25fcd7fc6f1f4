/**
 * `watch_job`: a tool that waits for a CI job to finish instead of an agent
 * polling for it. It reads the gateway's own `jobStatusUpdated` and
 * `jobLogAppended` subscriptions (the shared pollers and webhooks, over SSE
 * in this process), reports each status and the log's newest line as MCP
 * progress notifications, and a heartbeat every 15 s, so that a client's
 * request timeout does not fire while the job runs; it answers with the final
 * status and the log's last lines, or what it knows when `maxSeconds` ran out.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type EventSourceMessage, EventSourceParserStream } from 'eventsource-parser/stream';

/** Statuses after which a job changes no more (or waits for a person). */
const SETTLED = new Set(['SUCCESS', 'FAILED', 'CANCELED', 'SKIPPED', 'MANUAL']);
const HEARTBEAT_MS = 15_000;
/** Most characters of the log a result carries. */
const MAX_LOG_CHARS = 20_000;

export const WATCH_JOB_TOOL = {
  name: 'watch_job',
  description:
    "Waits for a CI job to finish (by the project's full path and the job's numeric id), reporting each status change as progress, then answers with the final status, why it failed if it did, and the last lines of its log. Stops waiting after maxSeconds and says so.",
  inputSchema: {
    type: 'object' as const,
    properties: {
      fullPath: { type: 'string', description: 'Full path of the project, e.g. platform/core.' },
      jobId: { type: 'string', description: 'Numeric id of the job.' },
      maxSeconds: { type: 'integer', minimum: 1, maximum: 900, description: 'Longest wait in seconds (default 300).' },
      tailLines: { type: 'integer', minimum: 1, maximum: 500, description: 'Lines of the log to return at the end (default 30).' },
    },
    required: ['fullPath', 'jobId'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
};

export interface LiveRunner {
  /** Opens a GraphQL subscription over SSE as the caller; the response's body is the event stream. */
  subscribe(operation: { query: string; variables: Record<string, unknown> }, signal: AbortSignal): Promise<Response>;
  /** Runs a query as the caller. */
  query(operation: {
    query: string;
    variables: Record<string, unknown>;
  }): Promise<{ data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] } | null>;
}

export interface Progress {
  report(message: string): Promise<void>;
}

const LOG = `subscription ($projectId: ID!, $jobId: ID!) { jobLogAppended(projectId: $projectId, jobId: $jobId, tailLines: 1) { text } }`;
/** Longest log line a progress message carries. */
const MAX_LINE_CHARS = 200;

const WATCH = `subscription ($projectId: ID!, $jobId: ID!) { jobStatusUpdated(projectId: $projectId, jobId: $jobId) { name status } }`;
const FINAL = `query ($fullPath: String!, $jobId: ID!, $lines: Int!) {
  project(fullPath: $fullPath) { job(id: $jobId) { restId name status failureReason finishedAt webUrl trace(tailLines: $lines) } }
}`;

/** The JSON of each `next` event of an SSE body (GraphQL over SSE), until `complete`. */
async function* events(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  const text = body.pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>);
  const stream = text.pipeThrough(new EventSourceParserStream());
  for await (const event of stream as unknown as AsyncIterable<EventSourceMessage>) {
    if (event.event === 'complete') return;
    if (event.data) yield JSON.parse(event.data) as unknown;
  }
}

/** Reports the last line of each new piece of the job's log, until `signal` ends the wait; a failure only ends this. */
async function followLog(runner: LiveRunner, variables: Record<string, unknown>, signal: AbortSignal, progress: Progress): Promise<void> {
  try {
    const response = await runner.subscribe({ query: LOG, variables }, signal);
    if (!response.body) return;
    for await (const event of events(response.body)) {
      const text = (event as { data?: { jobLogAppended?: { text?: string } } }).data?.jobLogAppended?.text ?? '';
      const line = text
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '')
        .at(-1);
      if (line !== undefined) await progress.report(`log: ${line.slice(0, MAX_LINE_CHARS)}`);
    }
  } catch {
    // The wait ended (or the log cannot be read): the status decides the answer.
  }
}

export async function watchJob(args: Record<string, unknown>, runner: LiveRunner, progress: Progress, cancelled: AbortSignal): Promise<CallToolResult> {
  const fullPath = args.fullPath;
  const jobId = args.jobId;
  if (typeof fullPath !== 'string' || (typeof jobId !== 'string' && typeof jobId !== 'number')) {
    return { isError: true, content: [{ type: 'text', text: 'BAD_USER_INPUT: fullPath (text) and jobId (a numeric id) are required.' }] };
  }
  const maxSeconds = typeof args.maxSeconds === 'number' ? Math.min(900, Math.max(1, Math.floor(args.maxSeconds))) : 300;
  const tailLines = typeof args.tailLines === 'number' ? Math.min(500, Math.max(1, Math.floor(args.tailLines))) : 30;
  const abort = new AbortController();
  const stop = () => abort.abort();
  cancelled.addEventListener('abort', stop, { once: true });
  const deadline = setTimeout(stop, maxSeconds * 1000);
  const heartbeat = setInterval(() => void progress.report('still waiting').catch(() => undefined), HEARTBEAT_MS);
  let settled = false;
  let failure: string | null = null;
  // The log's newest line as progress, while the status is awaited; it ends with the wait.
  const logs = followLog(runner, { projectId: fullPath, jobId: String(jobId) }, abort.signal, progress);
  try {
    const response = await runner.subscribe({ query: WATCH, variables: { projectId: fullPath, jobId: String(jobId) } }, abort.signal);
    if (response.body) {
      for await (const event of events(response.body)) {
        const result = event as {
          data?: { jobStatusUpdated?: { name: string; status: string } };
          errors?: { message: string; extensions?: { code?: string } }[];
        };
        if (result.errors?.length) {
          failure = `${result.errors[0]?.extensions?.code ?? 'ERROR'}: ${result.errors[0]?.message ?? ''}`;
          break;
        }
        const job = result.data?.jobStatusUpdated;
        if (!job) continue;
        await progress.report(`${job.name}: ${job.status}`);
        if (SETTLED.has(job.status)) {
          settled = true;
          break;
        }
      }
    }
  } catch (error) {
    if (!abort.signal.aborted) failure = `UPSTREAM_ERROR: ${(error as Error).message.slice(0, 200)}`;
  } finally {
    clearTimeout(deadline);
    clearInterval(heartbeat);
    cancelled.removeEventListener('abort', stop);
    abort.abort();
    await logs;
  }
  if (failure !== null) return { isError: true, content: [{ type: 'text', text: failure }] };
  // Nobody is left to read the end: no project, job or log is read for it.
  if (cancelled.aborted) return { isError: true, content: [{ type: 'text', text: 'CANCELLED: the client went away.' }] };
  const final = await runner.query({ query: FINAL, variables: { fullPath, jobId: String(jobId), lines: tailLines } });
  if (final?.errors?.length) {
    const first = final.errors[0];
    return { isError: true, content: [{ type: 'text', text: `${String(first?.extensions?.code ?? 'ERROR')}: ${first?.message ?? ''}` }] };
  }
  const job = (final?.data as { project?: { job?: Record<string, unknown> | null } | null } | undefined)?.project?.job ?? null;
  const trace = typeof job?.trace === 'string' ? job.trace.slice(-MAX_LOG_CHARS) : null;
  const structured = { job: job ? { ...job, trace } : null, finished: settled, waitedTooLong: !settled };
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}
