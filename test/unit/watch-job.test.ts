/**
 * The MCP tool watch_job (src/server/mcp-live.ts) stops when its client
 * goes: once the request is cancelled, the final query (project, job and
 * log tail) is never run. Driven with a runner that serves one status event
 * over SSE and then holds its stream open, as the gateway's would.
 */
import { describe, expect, it, vi } from 'vitest';
import { type LiveRunner, watchJob } from '../../src/server/mcp-live.js';

/** An SSE body with one `next` event, open until `signal` aborts. */
function heldStream(signal: AbortSignal, event: unknown): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(`event: next\ndata: ${JSON.stringify(event)}\n\n`));
      signal.addEventListener('abort', () => controller.error(new Error('aborted')), { once: true });
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

describe('watch_job', () => {
  it('runs no final query once its client has gone', async () => {
    const query = vi.fn<LiveRunner['query']>(async () => ({ data: { project: { job: { restId: 1, status: 'SUCCESS', trace: '' } } } }));
    const runner: LiveRunner = {
      subscribe: async (_operation, signal) => heldStream(signal, { data: { jobStatusUpdated: { name: 'test', status: 'RUNNING' } } }),
      query,
    };
    const client = new AbortController();
    const reported: string[] = [];
    const progress = {
      report: async (message: string) => {
        reported.push(message);
        // The client goes away once it has heard the first status.
        if (message === 'test: RUNNING') client.abort();
      },
    };
    const result = await watchJob({ fullPath: 'demo/playground', jobId: '2003', maxSeconds: 600 }, runner, progress, client.signal);
    expect(reported).toContain('test: RUNNING');
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'CANCELLED: the client went away.' }]);
    expect(query).not.toHaveBeenCalled();
  });
});
