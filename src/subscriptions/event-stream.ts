/**
 * The async iterator a subscription resolver returns. Batches are pushed as
 * promises and come out in push order, whatever order they settle in, so an
 * event that needs an upstream read cannot overtake an earlier one.
 * `accept` runs as items come out, in order, so it can keep dedup state.
 *
 * Unlike an async generator, `return()` runs the cleanup even when the
 * consumer never called `next()` (a client that unsubscribes or disconnects
 * at once), and so does an abort of `signal`.
 */

export interface EventStreamOptions<T> {
  /** Runs exactly once, when the stream ends for any reason. */
  cleanup: () => void;
  /** Filters (and records) items as they are delivered. */
  accept?: (item: T) => boolean;
  /** Ends the stream when aborted (the request or the WebSocket operation went away). */
  signal?: AbortSignal;
  /** Most batches kept for a slow consumer; the oldest are dropped beyond it (a later status supersedes them). */
  maxQueued?: number;
}

const DEFAULT_MAX_QUEUED = 1_000;

export class EventStream<T> implements AsyncIterableIterator<T> {
  private readonly batches: Promise<readonly T[]>[] = [];
  private ready: T[] = [];
  private wake: (() => void) | null = null;
  private ending = false;
  private closed = false;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly abort = () => this.close();

  constructor(private readonly options: EventStreamOptions<T>) {
    if (options.signal?.aborted) this.close();
    else options.signal?.addEventListener('abort', this.abort, { once: true });
  }

  /** Queues items; a rejected batch is dropped (the source already chose a fallback or nothing). */
  push(batch: readonly T[] | Promise<readonly T[]>): void {
    if (this.closed || this.ending) return;
    this.batches.push(Promise.resolve(batch).catch(() => []));
    if (this.batches.length > (this.options.maxQueued ?? DEFAULT_MAX_QUEUED)) this.batches.shift();
    this.wakeUp();
  }

  /** Completes the stream once what is queued has been delivered. */
  end(): void {
    this.ending = true;
    this.wakeUp();
  }

  /** Ends at once and runs the cleanup; idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.batches.length = 0;
    this.ready = [];
    this.options.signal?.removeEventListener('abort', this.abort);
    this.wakeUp();
    this.options.cleanup();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  next(): Promise<IteratorResult<T>> {
    // Serialised: a consumer calling next() twice still gets items in order.
    const result = this.chain.then(() => this.take());
    this.chain = result.catch(() => undefined);
    return result;
  }

  return(): Promise<IteratorResult<T>> {
    this.close();
    return Promise.resolve({ done: true, value: undefined });
  }

  throw(error?: unknown): Promise<IteratorResult<T>> {
    this.close();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private async take(): Promise<IteratorResult<T>> {
    for (;;) {
      if (this.closed) return { done: true, value: undefined };
      const item = this.ready.shift();
      if (item !== undefined) {
        if (!this.options.accept || this.options.accept(item)) return { done: false, value: item };
        continue;
      }
      const batch = this.batches.shift();
      if (batch) {
        this.ready = [...(await batch)];
        continue;
      }
      if (this.ending) {
        this.close();
        return { done: true, value: undefined };
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
