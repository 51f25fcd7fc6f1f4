import type { PipelineRecord } from '../upstreams/gitlab/records.js';
import { isAccessFailure, isRevoked, jobsTopic, notVisible, pollTopic, type Revoked, revokedError } from './channels.js';
import type { Credentials } from './scope.js';
import { type ListPollSpec, ListTopic, type ListTopicHub } from './list-poll.js';
import type { WebhookJobEvent } from './webhook-events.js';

export interface PipelineWatch {
  projectId: number;
  pipelineId?: number | null;
  ref?: string | null;
  /** REST status names. */
  statuses?: readonly string[] | null;
  /** Most pipelines of the current state this subscriber gets first, the newest kept; null for all of it. */
  initialLimit?: number | null;
}

/** Newest pipelines a watch of a whole project reads first: GitLab's page maximum. */
const PAGE_SIZE = 100;

/** A pipeline's state: its status and, to the second, when it last changed. */
function signature(pipeline: PipelineRecord): string {
  return `${pipeline.status}|${pipeline.updated_at ? Math.floor(Date.parse(pipeline.updated_at) / 1000) : ''}`;
}

function byId(pipelines: readonly PipelineRecord[]): PipelineRecord[] {
  return [...pipelines].sort((a, b) => a.id - b.id);
}

/** The pipelines a webhook event names; a pipeline event's own record, which a job event's (status as of the job) is not. */
function reported(event: WebhookJobEvent): { record: PipelineRecord; authoritative: boolean }[] {
  const out = new Map<number, { record: PipelineRecord; authoritative: boolean }>();
  for (const job of event.jobs) {
    const pipeline = job.pipeline;
    if (pipeline)
      out.set(pipeline.id, { record: { ...pipeline, project_id: pipeline.project_id ?? event.projectId }, authoritative: event.kind === 'pipeline' });
  }
  return [...out.values()];
}

/** Reads shared by a hub's topics of one scope for one webhook event; dropped once settled. */
const eventReads = new WeakMap<ListTopicHub, Map<string, Promise<PipelineRecord | null | 'denied'>>>();

/**
 * A pipeline of a webhook event as a scope sees it: read once per scope and
 * event. The read is at least as new as the event, so it wins; a scope that
 * may not see the pipeline gets nothing. When the read fails for an
 * upstream reason, a pipeline event's own record still goes out (over what
 * the scope saw before); a job event's does not, since its pipeline status
 * is the one from before the job's change.
 */
async function asSeenBy(
  hub: ListTopicHub,
  credentials: Credentials,
  scope: string,
  eventKey: string,
  event: { record: PipelineRecord; authoritative: boolean },
  before: PipelineRecord | undefined,
): Promise<PipelineRecord | null> {
  let reads = eventReads.get(hub);
  if (!reads) eventReads.set(hub, (reads = new Map()));
  const shared = reads;
  const key = `${scope}:${eventKey}:${event.record.id}`;
  let read = shared.get(key);
  if (!read) {
    read = hub
      .scopeClient(credentials)
      .getPipeline(event.record.project_id, event.record.id)
      .then((p) => p ?? ('denied' as const))
      .catch((error: unknown) => (isAccessFailure(error) ? ('denied' as const) : null));
    shared.set(key, read);
    const settled = read;
    void settled.finally(() => {
      if (shared.get(key) === settled) shared.delete(key);
    });
  }
  const current = await read;
  if (current === 'denied') return null;
  if (current) return current;
  return event.authoritative ? { ...before, ...event.record } : null;
}

export class PipelineTopic extends ListTopic<PipelineRecord, { signature: string; updated: number; record: PipelineRecord }> {
  constructor(
    hub: ListTopicHub,
    key: string,
    scope: string,
    credentials: Credentials,
    private readonly watch: PipelineWatch,
  ) {
    super(hub, key, scope, credentials, PIPELINE_POLL, watch.projectId, watch.statuses);
    const { projectId } = watch;
    this.stops.push(
      hub.bus.shared.listen<{ eventKey: string; event: WebhookJobEvent }>(jobsTopic(projectId), (message) => {
        const pipelines = reported(message.event).filter((p) => this.matches(p.record));
        if (pipelines.length === 0) return;
        this.push(
          Promise.all(pipelines.map((p) => asSeenBy(hub, credentials, scope, message.eventKey, p, this.seen.get(p.record.id)?.record))).then((read) =>
            read.filter((p): p is PipelineRecord => p !== null),
          ),
        );
      }),
      hub.pollChannel.listen<{ pipelines: PipelineRecord[] } | Revoked>(pollTopic('pipelines', projectId, scope), (message) =>
        isRevoked(message) ? this.revoke(revokedError(message)) : this.push(message.pipelines),
      ),
    );
  }

  protected async read(): Promise<PipelineRecord[]> {
    const { projectId, pipelineId, ref } = this.watch;
    const client = this.hub.joinClient(this.credentials);
    if (pipelineId != null) {
      const pipeline = await client.getPipeline(projectId, pipelineId);
      if (!pipeline) throw notVisible(`Pipeline ${pipelineId} of project ${projectId}`, `/api/v4/projects/${projectId}/pipelines/${pipelineId}`);
      return [pipeline];
    }
    const page = await client.listPipelines(projectId, { ref: ref ?? undefined }, { page: 1, perPage: PAGE_SIZE });
    return byId(page.items);
  }

  protected matches(pipeline: PipelineRecord): boolean {
    if (this.watch.pipelineId != null && pipeline.id !== this.watch.pipelineId) return false;
    if (this.watch.ref != null && pipeline.ref !== this.watch.ref) return false;
    return true;
  }

  protected accept(pipeline: PipelineRecord): boolean {
    if (!this.matches(pipeline)) return false;
    const before = this.seen.get(pipeline.id);
    const state = signature(pipeline);
    const updated = pipeline.updated_at ? Date.parse(pipeline.updated_at) : Number.NaN;
    if (before && (before.signature === state || (!Number.isNaN(updated) && updated < before.updated))) return false;
    // A record without updated_at (a job event's pipeline) keeps the time of the last one that had it.
    const record =
      before && !pipeline.updated_at ? { ...before.record, ...pipeline, updated_at: before.record.updated_at } : { ...before?.record, ...pipeline };
    if (before && signature(record) === before.signature) return false;
    this.seen.set(pipeline.id, { signature: signature(record), updated: Number.isNaN(updated) ? (before?.updated ?? 0) : updated, record });
    return !this.statuses || this.statuses.has(pipeline.status);
  }
}

/** A project's newest pipelines, polled for one scope: status and last change tell a change. */
const PIPELINE_POLL: ListPollSpec<PipelineRecord> = {
  kind: 'pipelines',
  list: async (client, projectId, perPage) => (await client.listPipelines(projectId, {}, { page: 1, perPage })).items,
  signature,
  message: (pipelines) => ({ pipelines }),
};
