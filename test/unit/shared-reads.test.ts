/**
 * Reads in flight, shared (src/upstreams/shared-reads.ts): a read whose
 * callers all left is cancelled, and a caller who comes after them starts a
 * read of its own instead of joining the cancelled one.
 */
import { describe, expect, it } from 'vitest';
import type { DeadlineSignal } from '../../src/upstreams/resilience.js';
import { SharedReads } from '../../src/upstreams/shared-reads.js';

/** A read that settles when told to, and rejects once its own signal aborts (as an HTTP call does, a little later). */
function controlledRead() {
  const starts: { signal: DeadlineSignal; resolve: (value: string) => void }[] = [];
  const start = ({ signal }: { signal: DeadlineSignal }) =>
    new Promise<string>((resolve, reject) => {
      starts.push({ signal, resolve });
      signal.once('abort', () => setImmediate(() => reject(new Error('upstream call aborted'))));
    });
  return { starts, start };
}

describe('SharedReads', () => {
  let step = 0;
  const reads = new SharedReads<string>(() => ++step);
  const cancelled = () => new Error('The caller closed the request');

  it('shares a read between two callers in flight at once', async () => {
    const { starts, start } = controlledRead();
    const first = reads.run('a', { signal: undefined, joinable: () => true, cancelled, start });
    const second = reads.run('a', { signal: undefined, joinable: () => true, cancelled, start });
    expect(second.joined).toBe(true);
    starts[0]?.resolve('answer');
    expect(await first.promise).toBe('answer');
    expect(await second.promise).toBe('answer');
    expect(starts).toHaveLength(1);
  });

  it('never lets a new caller join a read its last caller abandoned', async () => {
    const { starts, start } = controlledRead();
    const gone = new AbortController();
    const abandoned = reads.run('b', { signal: gone.signal, joinable: () => true, cancelled, start });
    gone.abort();
    await expect(abandoned.promise).rejects.toThrow('The caller closed the request');
    expect(starts[0]?.signal.aborted).toBe(true);
    // The abandoned call has not settled yet (its abort is still on its way): a new caller must not join it.
    const next = reads.run('b', { signal: undefined, joinable: () => true, cancelled, start });
    expect(next.joined).toBe(false);
    expect(starts).toHaveLength(2);
    starts[1]?.resolve('fresh');
    expect(await next.promise).toBe('fresh');
  });
});
