/**
 * A budget of estimated upstream calls for the operations running at once.
 * Every call an operation starts holds memory until its answer is read (its
 * part of the execution, the await chain, a deadline): sixteen operations of
 * 1,000 calls each would queue 16,000 of them behind the upstream pools. An
 * operation whose estimate does not fit waits here instead, as one small
 * record, and the upstreams stay just as busy with the ones admitted.
 * First come, first served, so a large operation is not starved by small ones.
 */

/** Thrown by acquire when the request is aborted while it waits. */
export class AdmissionAborted extends Error {
  constructor() {
    super('The request was aborted while it waited for its turn.');
    this.name = 'AdmissionAborted';
  }
}

interface Waiter {
  cost: number;
  admit: () => void;
}

export class CostBudget {
  private used = 0;
  private readonly queue: Waiter[] = [];

  /** `limit`: estimated upstream calls admitted at once. */
  constructor(readonly limit: number) {}

  /** Operations waiting for their turn. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Estimated calls of the operations running now. */
  get inUse(): number {
    return this.used;
  }

  /**
   * Resolves with a release function once `cost` fits (an operation above the
   * whole limit runs alone, one of cost 0 at once); rejects with AdmissionAborted
   * if `signal` aborts first.
   */
  acquire(cost: number, signal?: AbortSignal): Promise<() => void> {
    const weight = Math.min(Math.max(cost, 0), this.limit);
    // One that calls no upstream (introspection, __typename) has nothing to wait for.
    if (weight === 0) return Promise.resolve(() => {});
    if (this.queue.length === 0 && this.used + weight <= this.limit) {
      this.used += weight;
      return Promise.resolve(this.releaser(weight));
    }
    if (signal?.aborted) return Promise.reject(new AdmissionAborted());
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        cost: weight,
        admit: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.releaser(weight));
        },
      };
      const onAbort = () => {
        const index = this.queue.indexOf(waiter);
        if (index >= 0) this.queue.splice(index, 1);
        reject(new AdmissionAborted());
        // The head may have been what held the others back.
        this.admitWaiting();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  private releaser(weight: number): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= weight;
      this.admitWaiting();
    };
  }

  private admitWaiting(): void {
    let head = this.queue[0];
    while (head && this.used + head.cost <= this.limit) {
      this.queue.shift();
      this.used += head.cost;
      head.admit();
      head = this.queue[0];
    }
  }
}
