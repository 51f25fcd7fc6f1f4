/**
 * The subscription hub: turns "watch these jobs", "watch these pipelines" and
 * "watch this import" into event streams fed by two sources through one bus
 * (pipeline watches: pipeline-topic.ts).
 *
 * - Webhooks: the receiver hands each job or pipeline event to
 *   `publishWebhook`, which drops redeliveries and publishes it on the shared
 *   channel (every instance). Each credential scope then reads the job (or
 *   the pipeline's jobs) once per event, so its subscribers get the full
 *   record their own credentials may see, with the event's state on top; a
 *   scope whose credentials no longer see the job gets nothing.
 * - Pollers: where no webhook flows, one shared poller per project and
 *   credential scope lists the project's newest jobs and publishes what
 *   changed on a local topic named by that scope, so a poll made with one
 *   caller's credentials never reaches another's subscribers. A poller stays
 *   idle while webhooks for its project keep arriving.
 *
 * Subscribers with the same credentials and the same watch share one topic
 * (topic.ts): one pair of bus listeners, one poller reference, one dedup
 * state and one order of events, however many subscribe; each gets a
 * TopicStream (or, over graphql-ws, a place in an operation group's
 * stream). Every subscriber is checked with a read of its own credentials
 * first (concurrent joiners of a topic share the read in flight) and starts
 * from the current state, then gets every change, deduplicated by state and
 * never going back from a later state to an earlier one (webhooks can
 * arrive out of order, and both sources may report the same change).
 */
import type { UpstreamError } from '../errors.js';
import { GitlabClient } from '../upstreams/gitlab/client.js';
import type { JobRecord, PipelineRecord, ProjectRecord } from '../upstreams/gitlab/records.js';
import type { HttpClient } from '../upstreams/http.js';
import type { Channel, EventBus } from './event-bus.js';
import { PollerRegistry, type PollOutcome, type PollTask } from './pollers.js';
import { credentialScope, type Credentials } from './scope.js';
import { Topic, TopicStream } from './topic.js';
import { WEBHOOK_STATE_FIELDS, type WebhookJobEvent } from './webhook-events.js';
import { isAccessFailure, isRevoked, jobsTopic, notVisible, pollTopic, type Revoked, revoked, revokedError } from './channels.js';
import { finishedLog, LOG_READ_BYTES_PER_SECOND, type LogChunk, LogWatch, type LogWatchRequest, logFinished } from './job-log.js';
import { type ListPollSpec, ListTopic } from './list-poll.js';
import { PipelineTopic, type PipelineWatch } from './pipeline-topic.js';

export interface SubscriptionHubOptions {
  http: HttpClient;
  bus: EventBus;
  pollIntervalMs: number;
  pollMaxIntervalMs: number;
  /** Bytes a live job log may read per second from a server that sends the whole log each time; 0 = no bound. Default 1 MiB. */
  logReadBytesPerSecond?: number;
  /** How long after a webhook for a project its pollers stay idle. Default 10 minutes. */
  webhookQuietMs?: number;
  /** While webhooks keep a poller idle, how often it still checks that its credentials may read the project. Default 60 s. */
  accessRecheckMs?: number;
  /** Reports background failures (never with a credential). */
  log?: (message: string) => void;
}

/** Who subscribes: their credentials, their own client (for the access check) and the signal that ends them. */
export interface Subscriber {
  credentials: Credentials;
  client: GitlabClient;
  signal?: AbortSignal;
}

export interface JobWatch {
  projectId: number;
  jobId?: number | null;
  pipelineId?: number | null;
  /** REST status names. */
  statuses?: readonly string[] | null;
  /** Most items of the current state this subscriber gets first, the newest kept; null for all of it. */
  initialLimit?: number | null;
}

/** What a webhook delivery did. */
export type WebhookOutcome = 'accepted' | 'duplicate';

export interface HubStats {
  /** Shared pollers running. */
  pollers: number;
  /** Poll timers set. */
  timers: number;
  /** Bus topics listened to (Redis channel subscriptions included). */
  topics: number;
  /** Subscription streams open. */
  streams: number;
}

/** A shared-channel message: one webhook event and a key unique to it. */
export interface WebhookMessage {
  eventKey: string;
  event: WebhookJobEvent;
}

/** Jobs per page of a join read and of a webhook event's read: GitLab's page maximum. */
const POLL_PAGE_SIZE = 100;
/** Pages of a pipeline's jobs read for a pipeline subscription's initial state. */
export const MAX_PIPELINE_PAGES = 10;
/** How often a webhook-fed poller checks its credentials still read the project: a revoked token ends its subscriptions within this. */
const DEFAULT_ACCESS_RECHECK_MS = 60_000;
/** How long after a project's last webhook its pollers stay idle (and its answers count as webhook-fed in the cache). */
export const DEFAULT_WEBHOOK_QUIET_MS = 10 * 60_000;
/** import_status values after which nothing changes any more. */
const IMPORT_DONE = new Set(['finished', 'failed', 'canceled', 'none']);

/** Order of job states: a job never goes from a later group back to an earlier one. */
function stateRank(status: string): number {
  switch (status) {
    case 'running':
      return 1;
    case 'canceling':
      return 2;
    case 'success':
    case 'failed':
    case 'canceled':
    case 'skipped':
      return 3;
    default:
      return 0;
  }
}

/** A job's state; times to the second, since pipeline events carry no milliseconds and job events and REST do. */
function signature(job: JobRecord): string {
  const second = (time: string | null | undefined) => (time ? Math.floor(Date.parse(time) / 1000) : '');
  return `${job.status}|${second(job.started_at)}|${second(job.finished_at)}`;
}

/** Oldest first, whatever order the list came in (project lists are newest first, pipeline lists vary by version). */
function byId(jobs: JobRecord[]): JobRecord[] {
  return [...jobs].sort((a, b) => a.id - b.id);
}

export class SubscriptionHub {
  readonly pollers: PollerRegistry;
  /** Shared topics by key (what is watched, by whom): one per watch and credential scope, however many subscribe. */
  private readonly topics = new Map<string, Topic<unknown>>();
  /** The stream each subscription signal opened: how a WebSocket operation group finds the stream it fans out. */
  private readonly streamsBySignal = new WeakMap<AbortSignal, TopicStream<unknown, unknown>>();
  /** Reads shared by the subscribers of one scope for one webhook event; dropped once settled. */
  private readonly eventReads = new Map<string, Promise<JobRecord[] | null>>();
  private readonly quietMs: number;
  /** What one live job log may read per second (LOG_READ_BYTES_PER_SECOND). */
  readonly logReadBytesPerSecond: number;
  /** Live job logs by job and credential scope. */
  private readonly logWatches = new Map<string, LogWatch>();

  constructor(private readonly options: SubscriptionHubOptions) {
    this.quietMs = options.webhookQuietMs ?? DEFAULT_WEBHOOK_QUIET_MS;
    this.logReadBytesPerSecond = options.logReadBytesPerSecond ?? LOG_READ_BYTES_PER_SECOND;
    this.pollers = new PollerRegistry({
      intervalMs: options.pollIntervalMs,
      maxIntervalMs: options.pollMaxIntervalMs,
      lease: options.bus.lease,
      onError: (key, error) => options.log?.(`poller ${key.split(':').slice(0, 2).join(':')}: ${error instanceof Error ? error.message : 'failed'}`),
    });
  }

  get bus(): EventBus {
    return this.options.bus;
  }

  /**
   * Where poll results go: with a lease (Redis, or workers), to every
   * process, since only the lease holder polls; else this process only.
   */
  get pollChannel(): Channel {
    return this.options.bus.lease ? this.options.bus.shared : this.options.bus.local;
  }

  /**
   * Publishes a webhook event unless one of `deliveryKeys` was seen before.
   * `deliveryKeys[0]` must be unique to the event's content.
   */
  async publishWebhook(event: WebhookJobEvent, deliveryKeys: readonly [string, ...string[]]): Promise<WebhookOutcome> {
    if (!(await this.options.bus.firstDelivery(deliveryKeys))) return 'duplicate';
    const message: WebhookMessage = { eventKey: deliveryKeys[0], event };
    this.options.bus.shared.publish(jobsTopic(event.projectId), message);
    return 'accepted';
  }

  /**
   * Checks access (reads the job, the pipeline's jobs or the project's newest
   * jobs with the subscriber's credentials; its error is thrown as is) and
   * returns the stream: that current state, oldest first, then every change.
   * Subscribers with the same credentials and watch share one topic: one
   * set of listeners, one poller, one read per webhook event.
   */
  async watchJobs(subscriber: Subscriber, watch: JobWatch): Promise<TopicStream<JobRecord>> {
    const scope = credentialScope(subscriber.credentials);
    const statuses = watch.statuses?.length ? [...new Set(watch.statuses)].sort() : null;
    const key = `jobs|${scope}|${watch.projectId}|${watch.jobId ?? ''}|${watch.pipelineId ?? ''}|${statuses?.join(',') ?? ''}`;
    const topic = this.topic(key, () => new JobTopic(this, key, scope, subscriber.credentials, { ...watch, statuses }));
    return this.open(topic, subscriber, watch.initialLimit);
  }

  /**
   * Checks access (reads the pipeline, or the project's newest pipelines,
   * with the subscriber's credentials) and returns the stream: that state,
   * oldest first, then every change of a watched pipeline's status.
   */
  async watchPipelines(subscriber: Subscriber, watch: PipelineWatch): Promise<TopicStream<PipelineRecord>> {
    const scope = credentialScope(subscriber.credentials);
    const statuses = watch.statuses?.length ? [...new Set(watch.statuses)].sort() : null;
    const key = `pipelines|${scope}|${watch.projectId}|${watch.pipelineId ?? ''}|${watch.ref ?? ''}|${statuses?.join(',') ?? ''}`;
    const topic = this.topic(key, () => new PipelineTopic(this, key, scope, subscriber.credentials, { ...watch, statuses }));
    return this.open(topic, subscriber, watch.initialLimit);
  }

  /**
   * A job's log as it grows: checks access (reads the job with the
   * subscriber's credentials), then streams the log up to now (or its last
   * lines) and every new chunk; ends once the job finished. One watch, and
   * one poll of the log, per job and credential scope.
   */
  async watchJobLog(subscriber: Subscriber, request: LogWatchRequest): Promise<AsyncGenerator<LogChunk | Error>> {
    const job = await subscriber.client.getJob(request.projectId, request.jobId);
    if (!job) throw notVisible(`Job ${request.jobId} of project ${request.projectId}`, `/api/v4/projects/${request.projectId}/jobs/${request.jobId}`);
    if (logFinished(job.status)) return finishedLog(subscriber.client, request.projectId, request.jobId, request.tailLines, job.status);
    const scope = credentialScope(subscriber.credentials);
    const key = `${scope}|${request.projectId}|${request.jobId}`;
    let watch = this.logWatches.get(key);
    if (!watch || watch.isStopped) {
      const created = new LogWatch(this, key, subscriber.credentials, request.projectId, request.jobId, () => {
        if (this.logWatches.get(key) === created) this.logWatches.delete(key);
      });
      watch = created;
      this.logWatches.set(key, created);
      // A first read that fails (the log is gone) leaves no watch behind.
      created.ready.catch(() => created.stop());
    }
    await watch.ready;
    return watch.subscribe(subscriber.client, request.tailLines, subscriber.signal);
  }

  /**
   * Checks access (reads the project with the subscriber's credentials) and
   * returns the stream: the project now, then on every import_status change;
   * it completes after a final status (finished, failed, canceled, none).
   */
  async watchImport(subscriber: Subscriber, projectId: number): Promise<TopicStream<ProjectRecord>> {
    const scope = credentialScope(subscriber.credentials);
    const key = `import|${scope}|${projectId}`;
    const topic = this.topic(key, () => new ImportTopic(this, key, scope, subscriber.credentials, projectId));
    return this.open(topic, subscriber);
  }

  /**
   * The stream the subscription of `signal` opened, while it runs: a
   * WebSocket operation group (same credentials, same operation) joins its
   * further subscribers to it instead of opening one stream each.
   */
  streamFor(signal: AbortSignal): TopicStream<unknown, unknown> | undefined {
    const stream = this.streamsBySignal.get(signal);
    return stream && !stream.isClosed ? stream : undefined;
  }

  /** Counts for tests and the benchmark. */
  stats(): HubStats {
    let streams = 0;
    for (const topic of this.topics.values()) {
      for (const stream of topic.streams) streams += stream.subscribers;
    }
    for (const watch of this.logWatches.values()) streams += watch.subscribers;
    return {
      pollers: this.pollers.activePollers,
      timers: this.pollers.activeTimers,
      topics: this.options.bus.activeTopics(),
      streams,
    };
  }

  /** Ends every stream and poller; the bus is closed by its owner. */
  close(): void {
    for (const topic of [...this.topics.values()]) {
      for (const stream of [...topic.streams]) stream.close();
    }
    for (const watch of [...this.logWatches.values()]) watch.stop();
    this.pollers.stopAll();
  }

  /** A client for background reads of one scope (polls, webhook re-reads): no request signal, since no single subscriber owns it. */
  scopeClient(credentials: Credentials): GitlabClient {
    return new GitlabClient(this.options.http, credentials, undefined, undefined, true);
  }

  /** A client for the read a joining subscriber waits on (its initial state): not background work, though shared. */
  joinClient(credentials: Credentials): GitlabClient {
    return new GitlabClient(this.options.http, credentials);
  }

  /** Milliseconds a poller of a project with webhooks stays idle. */
  get webhookQuietMs(): number {
    return this.quietMs;
  }

  /** Milliseconds between access checks of an idle (webhook-fed) poller. */
  get accessRecheckMs(): number {
    return this.options.accessRecheckMs ?? DEFAULT_ACCESS_RECHECK_MS;
  }

  /** Forgets a topic that stopped. */
  forget(topic: Topic<unknown>): void {
    if (this.topics.get(topic.key) === topic) this.topics.delete(topic.key);
  }

  private topic<T>(key: string, create: () => Topic<T>): Topic<T> {
    let topic = this.topics.get(key) as Topic<T> | undefined;
    if (!topic || topic.isStopped) {
      topic = create();
      this.topics.set(key, topic as Topic<unknown>);
    }
    return topic;
  }

  private async open<T>(topic: Topic<T>, subscriber: Subscriber, initialLimit?: number | null): Promise<TopicStream<T>> {
    const stream = new TopicStream<T>(topic, { signal: subscriber.signal, initialLimit });
    if (subscriber.signal) this.streamsBySignal.set(subscriber.signal, stream as TopicStream<unknown, unknown>);
    try {
      await topic.join(stream, null);
    } catch (error) {
      stream.close();
      throw error;
    }
    return stream;
  }

  /** The current state a job watch starts from (the access check). */
  async readJobs(client: GitlabClient, watch: JobWatch): Promise<JobRecord[]> {
    const { projectId, jobId, pipelineId } = watch;
    if (jobId != null) {
      const job = await client.getJob(projectId, jobId);
      if (!job) throw notVisible(`Job ${jobId} of project ${projectId}`, `/api/v4/projects/${projectId}/jobs/${jobId}`);
      return [job];
    }
    if (pipelineId != null) {
      const jobs: JobRecord[] = [];
      for (let page = 1; page <= MAX_PIPELINE_PAGES; page++) {
        const result = await client.listJobs(projectId, undefined, { page, perPage: POLL_PAGE_SIZE }, pipelineId);
        jobs.push(...result.items);
        if (!result.hasNext) break;
      }
      return byId(jobs);
    }
    const result = await client.listJobs(projectId, watch.statuses ?? undefined, { page: 1, perPage: POLL_PAGE_SIZE });
    return byId(result.items);
  }

  /**
   * The jobs of a webhook event as this scope sees them: read once per scope
   * and event, with the event's state on top. When the read fails for an
   * upstream reason, the event's own fields (over what the scope saw
   * before) still go out; when the scope may not see the job, nothing does.
   */
  async webhookJobs(credentials: Credentials, scope: string, message: WebhookMessage, before: (id: number) => JobRecord | undefined): Promise<JobRecord[]> {
    const { event } = message;
    const key = `${scope}:${message.eventKey}`;
    let read = this.eventReads.get(key);
    if (!read) {
      const client = this.scopeClient(credentials);
      read = (
        event.kind === 'job'
          ? client.getJob(event.projectId, event.jobs[0]?.id ?? 0).then((job) => (job ? [job] : []))
          : client.listJobs(event.projectId, undefined, { page: 1, perPage: POLL_PAGE_SIZE }, event.pipelineId ?? 0).then((page) => page.items)
      ).catch((error: unknown) => (isAccessFailure(error) ? [] : null));
      this.eventReads.set(key, read);
      const settled = read;
      void settled.finally(() => {
        if (this.eventReads.get(key) === settled) this.eventReads.delete(key);
      });
    }
    const current = await read;
    const out: JobRecord[] = [];
    for (const reported of event.jobs) {
      const base = current === null ? (before(reported.id) ?? reported) : current.find((job) => job.id === reported.id);
      if (!base) continue;
      const state: Partial<JobRecord> = {};
      for (const field of WEBHOOK_STATE_FIELDS) {
        if (field in reported) Object.assign(state, { [field]: reported[field] });
      }
      if (reported.status !== 'failed') state.failure_reason = undefined;
      out.push({ ...base, ...state });
    }
    return byId(out);
  }
}

/** What a job watch's subscribers share: its listeners, its poller and, per job, the newest state seen. */
class JobTopic extends ListTopic<JobRecord, { rank: number; signature: string; record: JobRecord }, SubscriptionHub> {
  constructor(
    hub: SubscriptionHub,
    key: string,
    scope: string,
    credentials: Credentials,
    private readonly watch: JobWatch,
  ) {
    super(hub, key, scope, credentials, JOB_POLL, watch.projectId, watch.statuses);
    const { projectId } = watch;
    this.stops.push(
      hub.bus.shared.listen<WebhookMessage>(jobsTopic(projectId), (message) => {
        this.push(hub.webhookJobs(credentials, scope, message, (id) => this.seen.get(id)?.record));
      }),
      hub.pollChannel.listen<{ jobs: JobRecord[] } | Revoked>(pollTopic('jobs', projectId, scope), (message) =>
        isRevoked(message) ? this.revoke(revokedError(message)) : this.push(message.jobs),
      ),
    );
  }

  protected read(): Promise<JobRecord[]> {
    return this.hub.readJobs(this.hub.joinClient(this.credentials), this.watch);
  }

  protected matches(job: JobRecord): boolean {
    if (this.watch.jobId != null && job.id !== this.watch.jobId) return false;
    if (this.watch.pipelineId != null && job.pipeline?.id !== this.watch.pipelineId) return false;
    return true;
  }

  protected accept(job: JobRecord): boolean {
    if (!this.matches(job)) return false;
    const before = this.seen.get(job.id);
    const rank = stateRank(job.status);
    const state = signature(job);
    if (before && (before.signature === state || rank < before.rank)) return false;
    this.seen.set(job.id, { rank, signature: state, record: job });
    return !this.statuses || this.statuses.has(job.status);
  }
}

/** What the subscribers of a project's import share: the last import_status and the project as last read. */
class ImportTopic extends Topic<ProjectRecord> {
  private last: string | undefined;
  private latest: ProjectRecord | undefined;
  private readonly unlisten: () => void;
  private readonly pollKey: string;
  private release: (() => void) | null = null;

  constructor(
    private readonly hub: SubscriptionHub,
    key: string,
    private readonly scope: string,
    private readonly credentials: Credentials,
    private readonly projectId: number,
  ) {
    super(key);
    this.pollKey = `project:${projectId}:${scope}`;
    this.unlisten = hub.pollChannel.listen<{ project: ProjectRecord } | Revoked>(pollTopic('project', projectId, scope), (message) =>
      isRevoked(message) ? this.revoke(revokedError(message)) : this.push([message.project]),
    );
  }

  protected async read(): Promise<ProjectRecord[]> {
    const project = await this.hub.joinClient(this.credentials).getProject(this.projectId);
    if (!project) throw notVisible(`Project ${this.projectId}`, `/api/v4/projects/${this.projectId}`);
    return [project];
  }

  protected accept(project: ProjectRecord): boolean {
    const status = project.import_status ?? 'none';
    if (this.last !== undefined && (status === this.last || IMPORT_DONE.has(this.last))) return false;
    this.last = status;
    this.latest = project;
    return true;
  }

  protected current(project: ProjectRecord): ProjectRecord {
    return this.latest ?? project;
  }

  protected override get finished(): boolean {
    return this.last !== undefined && IMPORT_DONE.has(this.last);
  }

  protected override started(): void {
    if (this.finished) return;
    this.release = this.hub.pollers.acquire(this.pollKey, () => new ProjectPollTask(this.hub, this.projectId, this.credentials, this.scope), { leased: true });
  }

  protected override rejoined(): void {
    this.hub.pollers.nudge(this.pollKey);
  }

  protected stop(): void {
    this.unlisten();
    this.release?.();
    this.release = null;
    this.hub.forget(this as Topic<unknown>);
  }
}

/** A project's newest jobs, polled for one scope: the job state's signature tells a change. */
const JOB_POLL: ListPollSpec<JobRecord> = {
  kind: 'jobs',
  list: async (client, projectId, perPage) => (await client.listJobs(projectId, undefined, { page: 1, perPage })).items,
  signature,
  message: (jobs) => ({ jobs }),
};

/** Polls one project for one scope; publishes it when its import_status changed. */
class ProjectPollTask implements PollTask {
  private last: string | undefined;

  constructor(
    private readonly hub: SubscriptionHub,
    private readonly projectId: number,
    private readonly credentials: Credentials,
    private readonly scope: string,
  ) {}

  async poll(): Promise<PollOutcome> {
    const project = await this.hub
      .scopeClient(this.credentials)
      .getProject(this.projectId)
      .catch((error: unknown) => {
        if (isAccessFailure(error)) this.hub.pollChannel.publish(pollTopic('project', this.projectId, this.scope), revoked(error as UpstreamError));
        throw error;
      });
    if (!project) {
      const gone = notVisible(`Project ${this.projectId}`, `/api/v4/projects/${this.projectId}`);
      this.hub.pollChannel.publish(pollTopic('project', this.projectId, this.scope), revoked(gone));
      throw gone;
    }
    const status = project.import_status ?? 'none';
    if (status === this.last) return 'unchanged';
    const first = this.last === undefined;
    this.last = status;
    this.hub.pollChannel.publish(pollTopic('project', this.projectId, this.scope), { project });
    return first ? 'unchanged' : 'changed';
  }
}
