import { describe, expect, it } from 'vitest';
import { AdmissionAborted, CostBudget } from '../../src/server/admission.js';

/** Resolves after pending promise callbacks have run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('CostBudget', () => {
  it('admits at once what fits, and the next in line when enough is released', async () => {
    const budget = new CostBudget(100);
    const first = await budget.acquire(60);
    const admitted: string[] = [];
    void budget.acquire(50).then((release) => admitted.push('second') && release);
    void budget.acquire(10).then(() => admitted.push('third'));
    await settle();
    // The third would fit, but waits behind the second: first come, first served.
    expect(admitted).toEqual([]);
    expect(budget.waiting).toBe(2);
    expect(budget.inUse).toBe(60);
    first();
    await settle();
    expect(admitted).toEqual(['second', 'third']);
    expect(budget.inUse).toBe(60);
    expect(budget.waiting).toBe(0);
  });

  it('lets an operation above the whole limit run alone', async () => {
    const budget = new CostBudget(100);
    const small = await budget.acquire(1);
    let bigAdmitted = false;
    const big = budget.acquire(5000).then((release) => {
      bigAdmitted = true;
      return release;
    });
    await settle();
    expect(bigAdmitted).toBe(false);
    small();
    const release = await big;
    expect(budget.inUse).toBe(100);
    release();
    expect(budget.inUse).toBe(0);
  });

  it('does not hold back an operation that calls no upstream', async () => {
    const budget = new CostBudget(10);
    await budget.acquire(10);
    void budget.acquire(5);
    const release = await budget.acquire(0);
    expect(budget.waiting).toBe(1);
    release();
    expect(budget.inUse).toBe(10);
  });

  it('counts a release once, however often it is called', async () => {
    const budget = new CostBudget(10);
    const release = await budget.acquire(10);
    release();
    release();
    expect(budget.inUse).toBe(0);
    await budget.acquire(10);
    expect(budget.inUse).toBe(10);
  });

  it('drops a waiter whose request is aborted, and admits the ones it held back', async () => {
    const budget = new CostBudget(10);
    const running = await budget.acquire(5);
    const controller = new AbortController();
    const aborted = budget.acquire(10, controller.signal);
    const behind = budget.acquire(5);
    await settle();
    expect(budget.waiting).toBe(2);
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(AdmissionAborted);
    const release = await behind;
    expect(budget.inUse).toBe(10);
    release();
    running();
    expect(budget.inUse).toBe(0);
    expect(budget.waiting).toBe(0);
  });

  it('refuses at once when the signal is already aborted and the operation would wait', async () => {
    const budget = new CostBudget(10);
    await budget.acquire(10);
    await expect(budget.acquire(1, AbortSignal.abort())).rejects.toBeInstanceOf(AdmissionAborted);
    expect(budget.waiting).toBe(0);
  });
});
