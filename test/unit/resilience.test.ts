import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { upstreamPolicy } from '../../src/server/app.js';
import { backoffDelay, CircuitBreaker, ConcurrencyLimiter, deadline, parseRetryAfter, sleep } from '../../src/upstreams/resilience.js';

describe('CircuitBreaker', () => {
  it('opens after the threshold of consecutive failures, lets one probe through after the reset time, and closes on its success', () => {
    let now = 0;
    const breaker = new CircuitBreaker(3, 1000, () => now);
    breaker.onFailure();
    breaker.onFailure();
    breaker.onSuccess();
    breaker.onFailure();
    breaker.onFailure();
    expect(breaker.state).toBe('closed');
    breaker.onFailure();
    expect(breaker.state).toBe('open');
    expect(breaker.tryAcquire()).toBe(false);
    now = 999;
    expect(breaker.retryInMs).toBe(1);
    now = 1000;
    expect(breaker.state).toBe('half-open');
    expect(breaker.tryAcquire()).toBe(true);
    expect(breaker.tryAcquire()).toBe(false);
    breaker.onSuccess();
    expect(breaker.state).toBe('closed');
    expect(breaker.tryAcquire()).toBe(true);
  });

  it('opens again at once when the probe fails, and frees the probe when the caller went away', () => {
    let now = 0;
    const breaker = new CircuitBreaker(1, 100, () => now);
    breaker.onFailure();
    now = 100;
    expect(breaker.tryAcquire()).toBe(true);
    breaker.onNeutral();
    expect(breaker.tryAcquire()).toBe(true);
    breaker.onFailure();
    expect(breaker.state).toBe('open');
  });

  it('never opens with a threshold of 0', () => {
    const breaker = new CircuitBreaker(0, 100);
    for (let i = 0; i < 100; i++) breaker.onFailure();
    expect(breaker.tryAcquire()).toBe(true);
  });
});

describe('ConcurrencyLimiter', () => {
  it('grants slots in order and gives up a wait when its signal aborts', async () => {
    const limiter = new ConcurrencyLimiter(1);
    const first = await limiter.acquire();
    const controller = new AbortController();
    const aborted = limiter.acquire(controller.signal);
    const second = limiter.acquire();
    expect(limiter.queued).toBe(2);
    controller.abort(new Error('gone'));
    await expect(aborted).rejects.toThrow('gone');
    first();
    first();
    const release = await second;
    expect(limiter.inFlight).toBe(1);
    release();
    expect(limiter.inFlight).toBe(0);
  });

  it("gives up a wait when the call's deadline runs out, and takes a free slot at once", async () => {
    const limiter = new ConcurrencyLimiter(1);
    const held = limiter.tryAcquire();
    expect(held).not.toBeNull();
    expect(limiter.tryAcquire()).toBeNull();
    const d = deadline(20);
    await expect(limiter.acquire(d.signal)).rejects.toMatchObject({ name: 'TimeoutError' });
    d.dispose();
    expect(limiter.queued).toBe(0);
    held?.();
    expect(limiter.tryAcquire()).not.toBeNull();
  });

  describe('with weights (admission by estimated upstream calls)', () => {
    /** Resolves after pending promise callbacks have run. */
    const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

    it('admits at once what fits, and the next in line when enough is released', async () => {
      const limiter = new ConcurrencyLimiter(100);
      const first = await limiter.acquire(undefined, 60);
      const admitted: string[] = [];
      void limiter.acquire(undefined, 50).then(() => admitted.push('second'));
      void limiter.acquire(undefined, 10).then(() => admitted.push('third'));
      await settle();
      // The third would fit, but waits behind the second: first come, first served.
      expect(admitted).toEqual([]);
      expect(limiter.tryAcquire(10)).toBeNull();
      expect(limiter.queued).toBe(2);
      expect(limiter.inFlight).toBe(60);
      first();
      await settle();
      expect(admitted).toEqual(['second', 'third']);
      expect(limiter.inFlight).toBe(60);
      expect(limiter.queued).toBe(0);
    });

    it('lets a weight above the whole limit run alone', async () => {
      const limiter = new ConcurrencyLimiter(100);
      const small = await limiter.acquire(undefined, 1);
      let bigAdmitted = false;
      const big = limiter.acquire(undefined, 5000).then((release) => {
        bigAdmitted = true;
        return release;
      });
      await settle();
      expect(bigAdmitted).toBe(false);
      small();
      const release = await big;
      expect(limiter.inFlight).toBe(100);
      release();
      expect(limiter.inFlight).toBe(0);
    });

    it('does not hold back a weight of 0', async () => {
      const limiter = new ConcurrencyLimiter(10);
      await limiter.acquire(undefined, 10);
      void limiter.acquire(undefined, 5);
      const release = await limiter.acquire(undefined, 0);
      expect(limiter.queued).toBe(1);
      release();
      expect(limiter.inFlight).toBe(10);
    });

    it('drops a waiter whose signal aborts, and admits the ones it held back', async () => {
      const limiter = new ConcurrencyLimiter(10);
      const running = await limiter.acquire(undefined, 5);
      const controller = new AbortController();
      const aborted = limiter.acquire(controller.signal, 10);
      const behind = limiter.acquire(undefined, 5);
      await settle();
      expect(limiter.queued).toBe(2);
      controller.abort(new Error('gone'));
      await expect(aborted).rejects.toThrow('gone');
      const release = await behind;
      expect(limiter.inFlight).toBe(10);
      release();
      running();
      expect(limiter.inFlight).toBe(0);
      expect(limiter.queued).toBe(0);
    });
  });
});

describe('back-off and Retry-After', () => {
  it('draws a full-jitter delay under a doubling ceiling', () => {
    expect(backoffDelay(0, 100, 2000, () => 0.999)).toBe(99);
    expect(backoffDelay(3, 100, 2000, () => 0.5)).toBe(400);
    expect(backoffDelay(10, 100, 2000, () => 0.999)).toBe(1998);
    expect(backoffDelay(2, 100, 2000, () => 0)).toBe(0);
  });

  it('reads delta-seconds and HTTP dates', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});

describe('the resilience and limit options', () => {
  it('default as documented, and headers and body timeouts follow UPSTREAM_TIMEOUT_MS', () => {
    const config = loadConfig({ UPSTREAM_TIMEOUT_MS: '3000' });
    expect(upstreamPolicy(config)).toEqual({
      connectTimeoutMs: 5000,
      headersTimeoutMs: 3000,
      bodyTimeoutMs: 3000,
      deadlineMs: 3000,
      retries: 2,
      retryBaseMs: 100,
      retryMaxDelayMs: 2000,
      breakerThreshold: 5,
      breakerResetMs: 10_000,
      maxConcurrency: 128,
    });
    expect(config).toMatchObject({
      maxDepth: 15,
      maxAliases: 30,
      maxTokens: 2000,
      maxDirectives: 20,
      maxBodyBytes: 1_048_576,
      maxCost: 2000,
      fieldSuggestions: false,
    });
  });

  it('refuses bad values with the variable name', () => {
    expect(() => loadConfig({ UPSTREAM_RETRIES: '11' })).toThrow('UPSTREAM_RETRIES must be between 0 and 10, got 11');
    expect(() => loadConfig({ BREAKER_THRESHOLD: '-1' })).toThrow('BREAKER_THRESHOLD must be a whole number');
    expect(() => loadConfig({ MAX_COST: '0' })).toThrow('MAX_COST must be between 1');
    expect(loadConfig({}, ['--upstream-headers-timeout-ms', '250']).upstreamHeadersTimeoutMs).toBe(250);
  });
});

describe('deadline', () => {
  it('aborts with a TimeoutError when the time is up', async () => {
    const d = deadline(20);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(d.signal.aborted).toBe(true);
    expect((d.signal.reason as Error).name).toBe('TimeoutError');
    d.dispose();
  });

  it("aborts with the caller's reason when the caller aborts first", () => {
    const caller = new AbortController();
    const d = deadline(10_000, caller.signal);
    caller.abort(new Error('client went away'));
    expect(d.signal.aborted).toBe(true);
    expect((d.signal.reason as Error).message).toBe('client went away');
    d.dispose();
  });

  it('starts aborted under an aborted caller', () => {
    const caller = new AbortController();
    caller.abort(new Error('gone'));
    expect(deadline(10_000, caller.signal).signal.aborted).toBe(true);
  });

  it('takes a hundred calls on one caller signal without a listener-leak warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    const caller = new AbortController();
    const calls = Array.from({ length: 100 }, () => deadline(10_000, caller.signal));
    await new Promise((resolve) => setTimeout(resolve, 10));
    process.off('warning', onWarning);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
    // The caller's one listener aborts every call still running, and none already disposed.
    for (const call of calls.slice(50)) call.dispose();
    caller.abort(new Error('client went away'));
    expect(calls.map((call) => call.signal.aborted)).toEqual([...Array(50).fill(true), ...Array(50).fill(false)]);
    for (const call of calls.slice(0, 50)) call.dispose();
  });

  it('cuts a back-off sleep short when it runs out', async () => {
    // A sleep that ran its course would outlast the test's own time limit.
    const d = deadline(20);
    await expect(sleep(60_000, d.signal)).rejects.toMatchObject({ name: 'TimeoutError' });
    d.dispose();
  });

  it('once disposed, neither the timer nor the caller aborts it', async () => {
    const caller = new AbortController();
    const d = deadline(20, caller.signal);
    d.dispose();
    await new Promise((resolve) => setTimeout(resolve, 40));
    caller.abort(new Error('late'));
    expect(d.signal.aborted).toBe(false);
  });
});
