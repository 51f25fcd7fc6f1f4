/**
 * Shared topics: one watch (a job, a pipeline's jobs, a project's newest
 * jobs, a fork's import) as one set of credentials sees it, held once
 * however many subscribe: the bus listeners, the poller, the dedup state
 * and the order of events live in the Topic; each consumer is a
 * TopicStream (an SSE request's, or one graphql-ws operation group's, which
 * fans each result out to its members: src/server/websocket.ts).
 *
 * Everything that reaches a topic goes through one queue, in push order:
 * batches of changes (webhooks, polls) and joins. A join is a read with the
 * topic's credentials (the access check; concurrent joins share the read in
 * flight); when its turn comes, what the read shows newer than the topic
 * knew goes to every stream as a change, and the joiners get the current
 * state of what they watch. From then on a joiner gets every later change,
 * so it never misses one and never goes back to an earlier state.
 */

/** Who gets an item of a stream: null for every member of the stream, else just these (joiners' initial state). */
export type Audience<M> = readonly M[] | null;

/** Most entries kept for a slow consumer; the oldest changes are dropped beyond it (a later status supersedes them). */
const DEFAULT_MAX_QUEUED = 1_000;

interface Joiner<T, M> {
  stream: TopicStream<T, M>;
  /** Members joining an existing stream; null when the stream itself is new (it gets the state as its first items). */
  members: M[] | null;
}

interface JoinRead<T> {
  read: Promise<readonly T[]>;
  joiners: Joiner<T, unknown>[];
}

type TopicEntry<T> = { kind: 'change'; batch: Promise<readonly T[] | null> } | ({ kind: 'join' } & JoinRead<T>);

export abstract class Topic<T> {
  readonly streams = new Set<TopicStream<T, unknown>>();
  private readonly queue: TopicEntry<T>[] = [];
  private draining = false;
  private inFlight: JoinRead<T> | null = null;
  private joined = false;
  private stopped = false;

  constructor(readonly key: string) {}

  /** The join read (the access check), with the topic's credentials; its error is the joiner's. */
  protected abstract read(): Promise<readonly T[]>;
  /** Records an item in the topic's state; true when it is a change its subscribers get. */
  protected abstract accept(item: T): boolean;
  /** The topic's newest state of an item a join read returned, or null when its subscribers do not get it. */
  protected abstract current(item: T): T | null;
  /** After the first successful join (start the poller). */
  protected started(): void {}
  /** After any later successful join (a new subscriber: poll at the base pace again). */
  protected rejoined(): void {}
  /** Once, when the last stream left or the topic finished: stop listening, release the poller. */
  protected abstract stop(): void;
  /** True once nothing can change any more (an import that finished): streams complete after what is queued. */
  protected get finished(): boolean {
    return false;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Queues a batch of changes; a rejected batch, or null, is dropped (the source already chose a fallback or nothing). */
  push(batch: readonly T[] | Promise<readonly T[] | null>): void {
    if (this.stopped) return;
    this.queue.push({ kind: 'change', batch: Promise.resolve(batch).catch(() => null) });
    // A topic whose queue only grows (the upstream hangs): the oldest changes go, joins never.
    if (this.queue.length > DEFAULT_MAX_QUEUED) {
      const index = this.queue.findIndex((entry) => entry.kind === 'change');
      if (index >= 0) this.queue.splice(index, 1);
    }
    void this.drain();
  }

  /**
   * Joins `stream` (new, members null) or `members` to it: resolves once the
   * join read succeeded, rejects with its error. The state comes out of the
   * stream when the join's turn in the queue comes.
   */
  join<M>(stream: TopicStream<T, M>, members: M[] | null): Promise<void> {
    if (this.stopped) return Promise.reject(new Error('The topic has stopped.'));
    const joiner = { stream, members } as Joiner<T, unknown>;
    if (this.inFlight) {
      this.inFlight.joiners.push(joiner);
      return this.inFlight.read.then(() => undefined);
    }
    const read = this.read();
    const entry: JoinRead<T> = { read, joiners: [joiner] };
    this.inFlight = entry;
    const settled = () => {
      if (this.inFlight === entry) this.inFlight = null;
    };
    read.then(settled, settled);
    this.queue.push({ kind: 'join', ...entry });
    void this.drain();
    return read.then(() => undefined);
  }

  /**
   * The topic's credentials lost access: every stream gets `error` as its
   * last item (the subscription resolver throws it, so the subscriber sees a
   * coded error) and completes; the topic stops listening and polling.
   */
  protected revoke(error: Error): void {
    if (this.stopped) return;
    for (const stream of this.streams) stream.finish(error as unknown as T);
    this.halt();
  }

  /** A stream went away; the last one stops the topic. */
  leave(stream: TopicStream<T, unknown>): void {
    this.streams.delete(stream);
    if (this.streams.size === 0) this.halt();
  }

  private halt(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.queue.length = 0;
    this.stop();
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      for (let entry = this.queue.shift(); entry && !this.stopped; entry = this.queue.shift()) {
        if (entry.kind === 'change') {
          const items = await entry.batch;
          if (items && !this.stopped) this.broadcast(items.filter((item) => this.accept(item)));
        } else {
          let items: readonly T[];
          try {
            items = await entry.read;
          } catch {
            // Every joiner of this read got the error from join().
            continue;
          }
          if (this.stopped) break;
          // What the read shows newer than the topic knew: a change for everyone already there.
          this.broadcast(items.filter((item) => this.accept(item)));
          const state: T[] = [];
          for (const item of items) {
            const now = this.current(item);
            if (now !== null) state.push(now);
          }
          for (const joiner of entry.joiners) joiner.stream.welcome(state, joiner.members);
          if (!this.joined) {
            this.joined = true;
            this.started();
          } else this.rejoined();
        }
        if (this.finished) {
          for (const stream of this.streams) stream.end();
          this.halt();
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private broadcast(items: readonly T[]): void {
    if (!items.length) return;
    for (const stream of this.streams) stream.deliver(items);
  }
}

interface StreamEntry<T, M> {
  items: readonly T[];
  audience: Audience<M>;
  /** Members that become members of the stream when this entry comes out (before its items). */
  adds: readonly M[] | null;
}

export interface TopicStreamOptions {
  /** Ends the stream when aborted (the request or the WebSocket operation group went away). */
  signal?: AbortSignal;
  /** Runs once, when the stream ends for any reason. */
  cleanup?: () => void;
  /** Most entries kept for a slow consumer. */
  maxQueued?: number;
  /** Most items of the current state each subscriber gets first, the newest kept (0: changes only); null or absent for all. */
  initialLimit?: number | null;
}

/**
 * One consumer of a topic: the async iterator a subscription resolver
 * returns. Items come out in the topic's order; `lastAudience` tells who
 * the item last returned is for (a stream that fans out to members: the
 * WebSocket operation groups). Its first items are its own initial state;
 * it receives changes only from then on.
 *
 * Unlike an async generator, `return()` runs the cleanup even when the
 * consumer never called `next()`, and so does an abort of `signal`.
 */
export class TopicStream<T, M = unknown> implements AsyncIterableIterator<T> {
  /** Members getting every change (a group's subscribers); empty for a stream with one consumer. */
  readonly members = new Set<M>();
  /** Members whose join is under way. */
  private readonly joining = new Set<M>();
  /** Who the item last returned by next() is for. */
  lastAudience: Audience<M> = null;
  private readonly entries: StreamEntry<T, M>[] = [];
  private current: StreamEntry<T, M> | null = null;
  private index = 0;
  private live = false;
  private ending = false;
  private closed = false;
  private wake: (() => void) | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly abort = () => this.close();

  constructor(
    readonly topic: Topic<T>,
    private readonly options: TopicStreamOptions = {},
  ) {
    topic.streams.add(this as TopicStream<T, unknown>);
    if (options.signal?.aborted) this.close();
    else options.signal?.addEventListener('abort', this.abort, { once: true });
  }

  /** Subscribers this stream serves: its members and joiners, at least one (its own consumer). */
  get subscribers(): number {
    return this.closed ? 0 : Math.max(1, this.members.size + this.joining.size);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** False once the stream is ending or closed: it takes no new member. */
  get joinable(): boolean {
    return !this.closed && !this.ending && !this.topic.isStopped;
  }

  /** Makes a member of the stream at once: it gets whatever comes out next for every member (the stream's own state first). */
  adopt(member: M): void {
    if (!this.closed) this.members.add(member);
  }

  /** Joins a member to a live stream: resolves after its access check (the topic's read), rejects with its error. */
  join(member: M): Promise<void> {
    this.joining.add(member);
    return this.topic.join(this, [member]).catch((error: unknown) => {
      this.joining.delete(member);
      throw error;
    });
  }

  /** A member went away; the consumer ends the stream when none is left. */
  leave(member: M): void {
    this.joining.delete(member);
    this.members.delete(member);
  }

  /** Members (or, when null, the stream's own consumer) get the topic's current state; changes follow. */
  welcome(all: readonly T[], members: readonly M[] | null): void {
    if (this.closed) return;
    const limit = this.options.initialLimit;
    // The state is oldest first: a limit keeps its end.
    const state = limit === null || limit === undefined || limit >= all.length ? all : limit === 0 ? [] : all.slice(-limit);
    if (members === null) {
      this.live = true;
      this.enqueue({ items: state, audience: null, adds: null });
      return;
    }
    const adds = members.filter((member) => this.joining.has(member));
    if (adds.length) this.enqueue({ items: state, audience: adds, adds });
  }

  /** A change for every member; ignored until the stream's own state was queued. */
  deliver(items: readonly T[]): void {
    if (!this.live || this.closed || this.ending) return;
    this.enqueue({ items, audience: null, adds: null });
    const max = this.options.maxQueued ?? DEFAULT_MAX_QUEUED;
    if (this.entries.length > max) {
      const index = this.entries.findIndex((entry) => entry.adds === null);
      if (index >= 0) this.entries.splice(index, 1);
    }
  }

  /** Queues a last item (even before the stream's own state), then completes. */
  finish(last: T): void {
    if (this.closed) return;
    this.enqueue({ items: [last], audience: null, adds: null });
    this.end();
  }

  /** Completes the stream once what is queued has come out. */
  end(): void {
    this.ending = true;
    this.wakeUp();
  }

  /** Ends at once, leaves the topic and runs the cleanup; idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.entries.length = 0;
    this.current = null;
    // Members stay listed: the consumer completes them once next() says done.
    this.joining.clear();
    this.options.signal?.removeEventListener('abort', this.abort);
    this.wakeUp();
    this.topic.leave(this as TopicStream<T, unknown>);
    this.options.cleanup?.();
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

  private enqueue(entry: StreamEntry<T, M>): void {
    this.entries.push(entry);
    this.wakeUp();
  }

  private async take(): Promise<IteratorResult<T>> {
    for (;;) {
      if (this.closed) return { done: true, value: undefined };
      const entry = this.current;
      if (entry && this.index < entry.items.length) {
        const item = entry.items[this.index++] as T;
        this.lastAudience = entry.audience;
        return { done: false, value: item };
      }
      this.current = this.entries.shift() ?? null;
      this.index = 0;
      if (this.current) {
        for (const member of this.current.adds ?? []) {
          if (!this.joining.delete(member)) continue;
          this.members.add(member);
        }
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
