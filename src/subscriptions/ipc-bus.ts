/**
 * The event bus of a worker process (WORKERS > 1) without Redis: `shared`
 * goes through the primary, which hands every event to every worker, the
 * sender included, so a webhook received by one worker reaches the
 * subscribers of all. Webhook dedup asks the primary, which holds the one
 * set of seen delivery keys, and so do pollers: the worker holding a key's
 * lease in the primary polls, and its results reach the others as events.
 * `local` stays in this process.
 */
import { CountedChannel, type EventBus, type MinimalEventTarget, memoryTarget } from './event-bus.js';

/** Messages between a worker's bus and the primary; `duograph` tells them from anything else on the channel. */
export type BusMessage =
  | { duograph: 'bus'; topic: string; payload: unknown }
  | { duograph: 'dedup'; id: number; keys: readonly string[] }
  | { duograph: 'dedup-result'; id: number; fresh: boolean }
  | { duograph: 'lease'; id: number; key: string; op: 'hold' | 'release'; ttlMs: number }
  | { duograph: 'lease-result'; id: number; held: boolean };

export function isBusMessage(message: unknown): message is BusMessage {
  const kind = (message as { duograph?: unknown } | null)?.duograph;
  return kind === 'bus' || kind === 'dedup' || kind === 'dedup-result' || kind === 'lease' || kind === 'lease-result';
}

/** The primary's side of the workers' leases: who holds each key, until when. */
export class LeaseTable {
  private readonly leases = new Map<string, { holder: number; expires: number }>();

  /** Takes or renews `key` for `holder`; true when it holds it now. */
  hold(key: string, holder: number, ttlMs: number, now = Date.now()): boolean {
    const lease = this.leases.get(key);
    if (lease && lease.holder !== holder && lease.expires > now) return false;
    this.leases.set(key, { holder, expires: now + ttlMs });
    return true;
  }

  release(key: string, holder: number): void {
    if (this.leases.get(key)?.holder === holder) this.leases.delete(key);
  }

  /** A worker that died holds nothing: the others take over at once. */
  releaseAll(holder: number): void {
    for (const [key, lease] of this.leases) if (lease.holder === holder) this.leases.delete(key);
  }
}

type Send = (message: BusMessage) => void;

export function createIpcEventBus(
  leaseTtlMs: number,
  send: Send = (m) => process.send?.(m),
  on: (listener: (message: unknown) => void) => () => void = defaultOn,
): EventBus {
  const incoming = memoryTarget();
  // Publishing sends to the primary; the event comes back to this worker with every other's.
  const target: MinimalEventTarget = {
    addEventListener: (type, listener) => incoming.addEventListener(type, listener),
    removeEventListener: (type, listener) => incoming.removeEventListener(type, listener),
    dispatchEvent: (event) => {
      send({ duograph: 'bus', topic: event.type, payload: (event as CustomEvent).detail });
      return true;
    },
  };
  const pending = new Map<number, (answer: boolean) => void>();
  let nextId = 1;
  const off = on((message) => {
    if (!isBusMessage(message)) return;
    if (message.duograph === 'bus') incoming.dispatchEvent(new CustomEvent(message.topic, { detail: message.payload }));
    else if (message.duograph === 'dedup-result' || message.duograph === 'lease-result') {
      pending.get(message.id)?.(message.duograph === 'dedup-result' ? message.fresh : message.held);
      pending.delete(message.id);
    }
  });
  const ask = (message: (id: number) => BusMessage): Promise<boolean> =>
    new Promise<boolean>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      send(message(id));
    });
  const local = new CountedChannel(memoryTarget());
  const shared = new CountedChannel(target);
  return {
    local,
    shared,
    kind: 'memory',
    activeTopics: () => local.active + shared.active,
    firstDelivery: (keys) => ask((id) => ({ duograph: 'dedup', id, keys })),
    lease: {
      ttlMs: leaseTtlMs,
      hold: (key) => ask((id) => ({ duograph: 'lease', id, key, op: 'hold', ttlMs: leaseTtlMs })),
      release: async (key) => {
        await ask((id) => ({ duograph: 'lease', id, key, op: 'release', ttlMs: leaseTtlMs }));
      },
    },
    ready: async () => {},
    close: async () => {
      off();
      for (const resolve of pending.values()) resolve(false);
      pending.clear();
    },
  };
}

function defaultOn(listener: (message: unknown) => void): () => void {
  process.on('message', listener);
  return () => process.off('message', listener);
}
