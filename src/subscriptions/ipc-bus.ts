/**
 * The event bus of a worker process (WORKERS > 1) without Redis: `shared`
 * goes through the primary, which hands every event to every worker, the
 * sender included, so a webhook received by one worker reaches the
 * subscribers of all. Webhook dedup asks the primary, which holds the one
 * set of seen delivery keys. `local` stays in this process, as with the
 * memory bus: poll results are per worker.
 */
import { CountedChannel, type EventBus, type MinimalEventTarget, memoryTarget } from './event-bus.js';

/** Messages between a worker's bus and the primary; `duograph` tells them from anything else on the channel. */
export type BusMessage =
  | { duograph: 'bus'; topic: string; payload: unknown }
  | { duograph: 'dedup'; id: number; keys: readonly string[] }
  | { duograph: 'dedup-result'; id: number; fresh: boolean };

export function isBusMessage(message: unknown): message is BusMessage {
  const kind = (message as { duograph?: unknown } | null)?.duograph;
  return kind === 'bus' || kind === 'dedup' || kind === 'dedup-result';
}

type Send = (message: BusMessage) => void;

export function createIpcEventBus(send: Send = (m) => process.send?.(m), on: (listener: (message: unknown) => void) => () => void = defaultOn): EventBus {
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
  const pending = new Map<number, (fresh: boolean) => void>();
  let nextId = 1;
  const off = on((message) => {
    if (!isBusMessage(message)) return;
    if (message.duograph === 'bus') incoming.dispatchEvent(new CustomEvent(message.topic, { detail: message.payload }));
    else if (message.duograph === 'dedup-result') {
      pending.get(message.id)?.(message.fresh);
      pending.delete(message.id);
    }
  });
  const local = new CountedChannel(memoryTarget());
  const shared = new CountedChannel(target);
  return {
    local,
    shared,
    kind: 'memory',
    activeTopics: () => local.topics.size + shared.topics.size,
    firstDelivery: (keys) =>
      new Promise<boolean>((resolve) => {
        const id = nextId++;
        pending.set(id, resolve);
        send({ duograph: 'dedup', id, keys });
      }),
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
