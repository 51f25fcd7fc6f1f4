/**
 * What the job and pipeline pollers share: list a project's newest records
 * for one credential scope, publish those whose state changed on the poll
 * channel, and while webhooks for the project keep arriving, stay idle but
 * for an access check now and then (a webhook never reports a revoked token).
 */
import type { UpstreamError } from '../errors.js';
import type { GitlabClient } from '../upstreams/gitlab/client.js';
import { isAccessFailure, jobsTopic, pollTopic, revoked } from './channels.js';
import type { Channel, EventBus } from './event-bus.js';
import type { PollerRegistry, PollOutcome, PollTask } from './pollers.js';
import type { Credentials } from './scope.js';
import { Topic } from './topic.js';

/** What a list poller needs of the hub. */
export interface ListPollHub {
  readonly bus: EventBus;
  readonly pollChannel: Channel;
  readonly webhookQuietMs: number;
  readonly accessRecheckMs: number;
  scopeClient(credentials: Credentials): GitlabClient;
}

export interface ListPollSpec<T extends { id: number }> {
  kind: 'jobs' | 'pipelines';
  /** The newest `perPage` records of the project. */
  list(client: GitlabClient, projectId: number, perPage: number): Promise<T[]>;
  /** A record's state: a change is a different signature. */
  signature(record: T): string;
  /** The published message of changed records, oldest first. */
  message(changed: T[]): unknown;
}

/** Newest records a poll lists: GitLab's page maximum. */
const PAGE_SIZE = 100;

export class ListPollTask<T extends { id: number }> implements PollTask {
  private readonly known = new Map<number, string>();
  private primed = false;
  private lastWebhookAt = 0;
  private lastAccessCheck = Date.now();
  private readonly unlisten: () => void;

  constructor(
    private readonly hub: ListPollHub,
    private readonly spec: ListPollSpec<T>,
    private readonly projectId: number,
    private readonly credentials: Credentials,
    private readonly scope: string,
  ) {
    this.unlisten = hub.bus.shared.listen(jobsTopic(projectId), () => {
      this.lastWebhookAt = Date.now();
    });
  }

  async poll(): Promise<PollOutcome> {
    const topic = pollTopic(this.spec.kind, this.projectId, this.scope);
    try {
      return await this.read(topic);
    } catch (error) {
      // 401, 403 or 404: these credentials lost access. Their subscriptions end with the error; the poller stops with them.
      if (isAccessFailure(error)) this.hub.pollChannel.publish(topic, revoked(error as UpstreamError));
      throw error;
    }
  }

  private async read(topic: string): Promise<PollOutcome> {
    const client = this.hub.scopeClient(this.credentials);
    if (Date.now() - this.lastWebhookAt < this.hub.webhookQuietMs) {
      if (Date.now() - this.lastAccessCheck < this.hub.accessRecheckMs) return 'skipped';
      this.lastAccessCheck = Date.now();
      await this.spec.list(client, this.projectId, 1);
      return 'skipped';
    }
    this.lastAccessCheck = Date.now();
    const records = await this.spec.list(client, this.projectId, PAGE_SIZE);
    const changed = records.filter((record) => this.known.get(record.id) !== this.spec.signature(record));
    this.known.clear();
    for (const record of records) this.known.set(record.id, this.spec.signature(record));
    // The first poll publishes everything: it closes the gap between a subscriber's own read and this baseline.
    const first = !this.primed;
    this.primed = true;
    if (changed.length) this.hub.pollChannel.publish(topic, this.spec.message([...changed].sort((a, b) => a.id - b.id)));
    return changed.length && !first ? 'changed' : 'unchanged';
  }

  stop(): void {
    this.unlisten();
  }
}

/** What a job or pipeline topic needs of the hub: a list poller's needs, the poller registry and the topic table. */
export interface ListTopicHub extends ListPollHub {
  readonly pollers: PollerRegistry;
  forget(topic: Topic<unknown>): void;
  /** A client for a joining subscriber's initial read: not background work. */
  joinClient(credentials: Credentials): GitlabClient;
}

/**
 * What a job watch and a pipeline watch share: the newest state seen per
 * record, the status filter, the listeners they stop with, and one leased
 * list poller per project and scope, joined while anyone subscribes.
 */
export abstract class ListTopic<T extends { id: number; status: string }, Seen extends { record: T }, H extends ListTopicHub = ListTopicHub> extends Topic<T> {
  protected readonly seen = new Map<number, Seen>();
  protected readonly statuses: ReadonlySet<string> | null;
  /** Listeners (webhook events, poll results) to stop with the topic: each subclass adds its own. */
  protected readonly stops: (() => void)[] = [];
  private readonly pollKey: string;
  private release: (() => void) | null = null;

  constructor(
    protected readonly hub: H,
    key: string,
    protected readonly scope: string,
    protected readonly credentials: Credentials,
    private readonly spec: ListPollSpec<T>,
    private readonly projectId: number,
    statuses: readonly string[] | null | undefined,
  ) {
    super(key);
    this.statuses = statuses?.length ? new Set(statuses) : null;
    this.pollKey = `${spec.kind}:${projectId}:${scope}`;
  }

  /** Whether a record is one this watch is about. */
  protected abstract matches(record: T): boolean;

  protected current(record: T): T | null {
    if (!this.matches(record)) return null;
    const latest = this.seen.get(record.id)?.record ?? record;
    return !this.statuses || this.statuses.has(latest.status) ? latest : null;
  }

  protected override started(): void {
    this.release = this.hub.pollers.acquire(this.pollKey, () => new ListPollTask(this.hub, this.spec, this.projectId, this.credentials, this.scope), {
      leased: true,
    });
  }

  protected override rejoined(): void {
    this.hub.pollers.nudge(this.pollKey);
  }

  protected stop(): void {
    for (const stop of this.stops.splice(0)) stop();
    this.release?.();
    this.release = null;
    this.hub.forget(this as Topic<unknown>);
  }
}
