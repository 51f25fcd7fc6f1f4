/**
 * WORKERS > 1: gateway processes sharing one port through `node:cluster`.
 * The primary serves no request: it starts the workers (and the sandbox,
 * once, when there is one), restarts a worker that dies, drains them all on
 * SIGTERM, and is the meeting point the workers need without Redis:
 *
 * - the event bus (ipc-bus.ts): every `shared` event a worker publishes is
 *   handed to every worker, so a webhook received by one reaches the
 *   subscribers of all; webhook dedup asks the primary's one set of keys;
 * - `/readyz` of any worker asks whether every worker is ready;
 * - `/metrics` of any worker asks the primary for the whole group's
 *   metrics, which prom-client's AggregatorRegistry collects from each.
 *
 * With REDIS_URL the bus and dedup go through Redis as for instances; the
 * primary still answers readiness and metrics.
 */
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { MemoryDedup } from '../subscriptions/event-bus.js';
import { createIpcEventBus, isBusMessage, LeaseTable } from '../subscriptions/ipc-bus.js';
import type { AppOptions } from './app.js';

/** What a worker asks the primary, and the answers. */
type GroupMessage =
  | { duograph: 'ready'; url: string }
  | { duograph: 'group-ready'; id: number }
  | { duograph: 'group-ready-result'; id: number; ready: boolean }
  | { duograph: 'metrics'; id: number }
  | { duograph: 'metrics-result'; id: number; text: string };

function isGroupMessage(message: unknown): message is GroupMessage {
  const kind = (message as { duograph?: unknown } | null)?.duograph;
  return kind === 'ready' || kind === 'group-ready' || kind === 'group-ready-result' || kind === 'metrics' || kind === 'metrics-result';
}

export interface PrimaryOptions {
  workers: number;
  /** Environment of each worker, on top of this process's. */
  env: Record<string, string>;
  /** One line per worker event (start, ready, exit, restart); never a credential. */
  log: (line: string) => void;
  /** How long a worker may take to drain on SIGTERM before it is killed. */
  shutdownTimeoutMs: number;
}

export interface Primary {
  /** Resolves once every worker said it is listening, with the URL they listen on. */
  ready: Promise<URL>;
  /** SIGTERM to every worker, then waits for all to exit (killing any that outlives the timeout). */
  stop(): Promise<void>;
}

/** Starts the workers and serves their requests to the group. */
export function startPrimary(options: PrimaryOptions): Primary {
  // The workers accept from the shared socket themselves. Under round-robin the primary hands each connection to a
  // worker, and one handed to a worker that was just killed, before the primary heard, is lost: the client waits for
  // ever (1 of 10 connections opened right after a SIGKILL, every time; nodejs/node#3551). A connection nobody
  // accepted waits in the socket's backlog for the worker that lives. The kernel spreads connections less evenly than
  // round-robin: NODE_CLUSTER_SCHED_POLICY=rr, Node's own setting, brings round-robin back, with that risk.
  if (!process.env.NODE_CLUSTER_SCHED_POLICY) cluster.schedulingPolicy = cluster.SCHED_NONE;
  const aggregator = new AggregatorRegistry();
  const dedup = new MemoryDedup();
  const leases = new LeaseTable();
  const ready = new Set<number>();
  let stopping = false;
  let allReady: (url: URL) => void = () => {};
  const whenReady = new Promise<URL>((resolve) => (allReady = resolve));

  const everyWorker = (): Worker[] => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);

  const onMessage = (worker: Worker, message: unknown) => {
    if (isBusMessage(message)) {
      if (message.duograph === 'bus') {
        for (const w of everyWorker()) if (w.isConnected()) w.send(message);
      } else if (message.duograph === 'dedup') {
        worker.send({ duograph: 'dedup-result', id: message.id, fresh: dedup.check(message.keys) });
      } else if (message.duograph === 'lease') {
        if (message.op === 'release') leases.release(message.key, worker.id);
        const held = message.op === 'hold' && leases.hold(message.key, worker.id, message.ttlMs);
        worker.send({ duograph: 'lease-result', id: message.id, held });
      }
      return;
    }
    if (!isGroupMessage(message)) return;
    switch (message.duograph) {
      case 'ready':
        ready.add(worker.id);
        options.log(`worker ${worker.id} (pid ${worker.process.pid}) ready`);
        if (ready.size >= options.workers) allReady(new URL(message.url));
        break;
      case 'group-ready':
        worker.send({ duograph: 'group-ready-result', id: message.id, ready: !stopping && ready.size >= options.workers });
        break;
      case 'metrics':
        void aggregator.clusterMetrics().then(
          (text) => worker.isConnected() && worker.send({ duograph: 'metrics-result', id: message.id, text }),
          (error: unknown) => {
            options.log(`metrics of the group: ${error instanceof Error ? error.message : 'failed'}`);
            if (worker.isConnected()) worker.send({ duograph: 'metrics-result', id: message.id, text: '' });
          },
        );
        break;
      default:
        break;
    }
  };

  const fork = (): void => {
    const worker = cluster.fork(options.env);
    worker.on('message', (message: unknown) => onMessage(worker, message));
  };

  cluster.on('exit', (worker, code, signal) => {
    ready.delete(worker.id);
    leases.releaseAll(worker.id);
    if (stopping) return;
    options.log(`worker ${worker.id} (pid ${worker.process.pid}) exited (${signal ?? `code ${code}`}); starting another`);
    fork();
  });
  for (let i = 0; i < options.workers; i++) fork();

  return {
    ready: whenReady,
    stop: async () => {
      stopping = true;
      const workers = everyWorker();
      await Promise.all(
        workers.map(
          (worker) =>
            new Promise<void>((resolve) => {
              if (worker.isDead()) return resolve();
              const timer = setTimeout(() => worker.process.kill('SIGKILL'), options.shutdownTimeoutMs + 5_000);
              worker.once('exit', () => {
                clearTimeout(timer);
                resolve();
              });
              worker.process.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}

/** A worker's side of the group: the bus, and the questions it asks the primary. */
export function workerOptions(leaseTtlMs: number): NonNullable<AppOptions['worker']> {
  const pending = new Map<number, (message: GroupMessage) => void>();
  let nextId = 1;
  process.on('message', (message: unknown) => {
    if (!isGroupMessage(message) || !('id' in message)) return;
    if (message.duograph !== 'group-ready-result' && message.duograph !== 'metrics-result') return;
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  const ask = <T>(duograph: 'group-ready' | 'metrics', read: (answer: GroupMessage) => T, fallback: T): Promise<T> =>
    new Promise((resolve) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        resolve(fallback);
      }, 5_000);
      pending.set(id, (answer) => {
        clearTimeout(timer);
        resolve(read(answer));
      });
      process.send?.({ duograph, id });
    });
  return {
    bus: createIpcEventBus(leaseTtlMs),
    groupReady: () => ask('group-ready', (a) => a.duograph === 'group-ready-result' && a.ready, false),
    groupMetrics: () => ask('metrics', (a) => (a.duograph === 'metrics-result' ? a.text : ''), ''),
  };
}

/** Tells the primary this worker is listening at `url`; its metrics are those of `registry` in the group's. */
export function reportReady(url: URL, registry: Registry): void {
  // prom-client's worker side answers the primary's aggregation with the registries set here; constructing
  // an AggregatorRegistry is what installs that answering listener in a worker.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  process.send?.({ duograph: 'ready', url: url.href } satisfies GroupMessage);
}
