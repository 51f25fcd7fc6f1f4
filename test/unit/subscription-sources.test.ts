import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { UpstreamError } from '../../src/errors.js';
import { tokenMatches } from '../../src/server/webhooks.js';
import { PollerRegistry, type PollOutcome } from '../../src/subscriptions/pollers.js';
import { credentialScope } from '../../src/subscriptions/scope.js';
import { readWebhookEvent, webhookTime } from '../../src/subscriptions/webhook-events.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`../fixtures/gitlab-webhooks/${name}`, import.meta.url), 'utf8'));

describe('readWebhookEvent', () => {
  it('reads GitLab\'s job event (object_kind "build") into a REST job record', () => {
    const read = readWebhookEvent(fixture('job_event.payload.json'));
    expect(read).toMatchObject({ ok: true, event: { kind: 'job', projectId: 380, pipelineId: 2366 } });
    if (!read.ok) return;
    expect(read.event.jobs).toEqual([
      {
        id: 1977,
        project_id: 380,
        name: 'test',
        stage: 'test',
        ref: 'gitlab-script-trigger',
        status: 'created',
        tag: false,
        created_at: '2021-02-23T02:41:37.886Z',
        started_at: null,
        finished_at: null,
        duration: null,
        queued_duration: 1095.588715,
        allow_failure: false,
        user: { id: 3, name: 'User', avatar_url: 'http://www.gravatar.com/avatar/e32bd13e2add097461cb96824b7a829c?s=80&d=identicon' },
        runner: { id: 380987, description: 'shared-runners-manager-6.gitlab.com', active: true, is_shared: false, runner_type: 'project_type' },
        web_url: 'http://192.168.64.1:3005/gitlab-org/gitlab-test/-/jobs/1977',
        // commit.id in a job event is the pipeline's id: the SHA is used instead.
        commit: {
          id: '2293ada6b400935a1378653304eaf6221e0fdb8f',
          short_id: '2293ada6',
          title: 'test',
          message: 'test\n',
          author_name: 'User',
          author_email: 'user@gitlab.com',
          created_at: '',
        },
        pipeline: { id: 2366, project_id: 380, ref: 'gitlab-script-trigger', sha: '2293ada6b400935a1378653304eaf6221e0fdb8f', status: 'created' },
      },
    ]);
  });

  it('reads every build of GitLab\'s pipeline event, with its "… UTC" times as ISO 8601', () => {
    const read = readWebhookEvent(fixture('pipeline_event.payload.json'));
    expect(read).toMatchObject({ ok: true, event: { kind: 'pipeline', projectId: 1, pipelineId: 31 } });
    if (!read.ok) return;
    expect(read.event.jobs.map((j) => `${j.id}:${j.name}:${j.status}`)).toEqual([
      '380:production:skipped',
      '377:test-image:success',
      '378:test-build:failed',
      '376:build-image:success',
      '379:staging:created',
    ]);
    expect(read.event.jobs[1]).toMatchObject({
      created_at: '2016-08-12T15:23:28.000Z',
      started_at: '2016-08-12T15:26:12.000Z',
      pipeline: { id: 31, status: 'success' },
    });
  });

  it('tells unsupported kinds from malformed events', () => {
    expect(readWebhookEvent({ object_kind: 'push' })).toMatchObject({ ok: false, reason: 'unsupported' });
    expect(readWebhookEvent({ object_kind: 'build', build_id: '1', project_id: 1, build_status: 'running' })).toMatchObject({ ok: false, reason: 'invalid' });
    expect(readWebhookEvent({ object_kind: 'pipeline', object_attributes: { id: 1 }, project: { id: 2 }, builds: [{ id: 'x' }] })).toMatchObject({
      ok: false,
      reason: 'invalid',
    });
    expect(readWebhookEvent(null)).toMatchObject({ ok: false, reason: 'invalid' });
  });

  it('reads both timestamp formats', () => {
    expect(webhookTime('2016-08-12 15:23:28 UTC')).toBe('2016-08-12T15:23:28.000Z');
    expect(webhookTime('2021-02-23T02:41:37.886Z')).toBe('2021-02-23T02:41:37.886Z');
    expect(webhookTime('yesterday')).toBeNull();
    expect(webhookTime(null)).toBeNull();
  });
});

describe('tokenMatches', () => {
  it('accepts only the exact secret, whatever the length of what is presented', () => {
    const secret = 'a-webhook-secret-of-some-length';
    expect(tokenMatches(secret, secret)).toBe(true);
    for (const presented of [undefined, '', 'a', secret.slice(0, -1), `${secret}x`, secret.toUpperCase()]) expect(tokenMatches(presented, secret)).toBe(false);
  });
});

describe('credentialScope', () => {
  it('names the same credentials the same way, and different ones differently', () => {
    expect(credentialScope({ 'private-token': 'a', sudo: 'x' })).toBe(credentialScope({ sudo: 'x', 'private-token': 'a' }));
    expect(credentialScope({ 'private-token': 'a' })).not.toBe(credentialScope({ 'private-token': 'b' }));
    expect(credentialScope({ 'private-token': 'glpat-secret' })).not.toContain('secret');
    expect(credentialScope({})).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('PollerRegistry', () => {
  afterEach(() => vi.useRealTimers());

  it("waits at least what a poll's cost asks (a whole job log), and a rate limit's reset, whatever the back-off says", async () => {
    vi.useFakeTimers();
    const registry = new PollerRegistry({ intervalMs: 100, maxIntervalMs: 300 });
    let polls = 0;
    let failNext = false;
    const release = registry.acquire('log', () => ({
      poll: async () => {
        polls++;
        if (failNext) {
          failNext = false;
          throw new UpstreamError('held back', 'UPSTREAM_RATE_LIMITED', { name: 'gitlab', status: null, method: 'GET', path: '/x', retryAfterSeconds: 42 });
        }
        return 'changed';
      },
      minIntervalMs: () => 10_000,
    }));
    await vi.advanceTimersToNextTimerAsync();
    expect(polls).toBe(1);
    // A change would poll again after 100 ms; the task's cost asks 10 s.
    expect(registry.dueIn('log')).toBe(10_000);
    failNext = true;
    await vi.advanceTimersToNextTimerAsync();
    expect(polls).toBe(2);
    expect(registry.dueIn('log')).toBe(42_000);
    release();
  });

  it('shares one poller per key, backs off, resets on a change, and leaves no timer after the last release', async () => {
    vi.useFakeTimers();
    const outcomes: (PollOutcome | Error)[] = ['unchanged', 'unchanged', 'unchanged', new Error('503'), 'changed'];
    let polls = 0;
    let stopped = 0;
    const registry = new PollerRegistry({ intervalMs: 100, maxIntervalMs: 300 });
    const create = () => ({
      poll: async () => {
        const outcome = outcomes[polls++] ?? 'unchanged';
        if (outcome instanceof Error) throw outcome;
        return outcome;
      },
      stop: () => stopped++,
    });
    const release1 = registry.acquire('p', create);
    const release2 = registry.acquire('p', create);
    expect([registry.activePollers, registry.activeTimers, registry.subscribersOf('p')]).toEqual([1, 1, 2]);
    const intervals: (number | undefined)[] = [];
    for (let i = 0; i < 5; i++) {
      await vi.advanceTimersToNextTimerAsync();
      intervals.push(registry.intervalOf('p'));
    }
    // unchanged x3: 150, 225, 300 (capped); failure: 300 (capped); change: back to 100.
    expect(intervals).toEqual([150, 225, 300, 300, 100]);
    expect(polls).toBe(5);
    release1();
    release1();
    expect(registry.activePollers).toBe(1);
    release2();
    expect([registry.activePollers, registry.activeTimers, stopped]).toEqual([0, 0, 1]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(polls).toBe(5);
  });

  it('does not reschedule a poll that was in flight when the last subscriber left', async () => {
    vi.useFakeTimers();
    let finish: (outcome: PollOutcome) => void = () => {};
    const registry = new PollerRegistry({ intervalMs: 100, maxIntervalMs: 100 });
    const release = registry.acquire('p', () => ({ poll: () => new Promise<PollOutcome>((resolve) => (finish = resolve)) }));
    await vi.advanceTimersByTimeAsync(100);
    release();
    finish('changed');
    await vi.advanceTimersByTimeAsync(1_000);
    expect([registry.activePollers, registry.activeTimers]).toEqual([0, 0]);
  });
});

describe('subscription config', () => {
  it('has defaults and reads each option', () => {
    expect(loadConfig({}, [])).toMatchObject({
      requireCredentials: false,
      gitlabWebhookSecret: null,
      pollIntervalMs: 5_000,
      pollMaxIntervalMs: 60_000,
      redisUrl: null,
      publicUrl: null,
    });
    const config = loadConfig({
      REQUIRE_CREDENTIALS: 'true',
      GITLAB_WEBHOOK_SECRET: 's'.repeat(20),
      POLL_INTERVAL_MS: '250',
      REDIS_URL: 'redis://127.0.0.1:6379',
      PUBLIC_URL: 'https://gw.example.com',
    });
    expect(config).toMatchObject({ requireCredentials: true, pollIntervalMs: 250, redisUrl: 'redis://127.0.0.1:6379' });
    expect(config.publicUrl?.href).toBe('https://gw.example.com/');
  });

  it('names the variable on a bad value and never echoes a secret', () => {
    expect(() => loadConfig({ REQUIRE_CREDENTIALS: 'maybe' })).toThrow(new ConfigError('REQUIRE_CREDENTIALS must be true or false, got "maybe"'));
    expect(() => loadConfig({ REDIS_URL: 'http://x' })).toThrow(/REDIS_URL must be a redis/);
    expect(() => loadConfig({ POLL_INTERVAL_MS: '1000', POLL_MAX_INTERVAL_MS: '500' })).toThrow(/POLL_MAX_INTERVAL_MS/);
    try {
      loadConfig({ GITLAB_WEBHOOK_SECRET: 'short-secret' });
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toMatch(/^GITLAB_WEBHOOK_SECRET must be/);
      expect((error as Error).message).not.toContain('short-secret');
    }
  });
});
