/**
 * GitLab job and pipeline webhook payloads (reference/gitlab/webhooks/) read
 * into job records of the REST shape, so a webhook event and a polled job
 * list look the same to subscribers. Job events are `object_kind: "build"`
 * (not "job"); pipeline events carry every job of the pipeline in `builds`.
 * Their timestamps differ: the job payload is ISO 8601, the pipeline payload
 * (and its builds) "2016-08-12 15:23:28 UTC"; both come out as ISO 8601.
 */
import type { JobRecord, JobUserRecord, RunnerRecord } from '../upstreams/gitlab/records.js';

/** A job or pipeline webhook, read: which project, which jobs in which state. */
export interface WebhookJobEvent {
  kind: 'job' | 'pipeline';
  projectId: number;
  /** The pipeline of a pipeline event, or of the job of a job event. */
  pipelineId: number | null;
  /** The states the event reports, as partial REST job records. */
  jobs: JobRecord[];
}

/** Why a payload was not read: `unsupported` is a valid event of another kind, `invalid` a malformed one. */
export type WebhookReadResult = { ok: true; event: WebhookJobEvent } | { ok: false; reason: 'unsupported' | 'invalid'; message: string };

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function float(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** "2016-08-12 15:23:28 UTC" or ISO 8601 to ISO 8601; null for anything else. */
export function webhookTime(value: unknown): string | null {
  if (typeof value !== 'string' || value === '') return null;
  const legacy = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d+)?) UTC$/.exec(value);
  const time = Date.parse(legacy ? `${legacy[1]}T${legacy[2]}Z` : value);
  return Number.isNaN(time) ? null : new Date(time).toISOString();
}

function user(value: unknown): JobUserRecord | null {
  if (!isObject(value) || num(value.id) === undefined) return null;
  return {
    id: num(value.id) ?? 0,
    name: str(value.name) ?? '',
    ...(str(value.username) !== undefined ? { username: str(value.username) } : {}),
    avatar_url: str(value.avatar_url) ?? null,
  };
}

function runner(value: unknown): RunnerRecord | null {
  if (!isObject(value) || num(value.id) === undefined) return null;
  return {
    id: num(value.id) ?? 0,
    description: str(value.description) ?? null,
    ...(typeof value.active === 'boolean' ? { active: value.active } : {}),
    ...(typeof value.is_shared === 'boolean' ? { is_shared: value.is_shared } : {}),
    ...(str(value.runner_type) !== undefined ? { runner_type: str(value.runner_type) } : {}),
  };
}

/** GitLab's job page URL, from the project's web URL. */
function jobUrl(project: unknown, jobId: number): string | undefined {
  const base = isObject(project) ? str(project.web_url) : undefined;
  return base ? `${base.replace(/\/$/, '')}/-/jobs/${jobId}` : undefined;
}

function readJobEvent(body: Json): WebhookReadResult {
  const id = num(body.build_id);
  const projectId = num(body.project_id);
  const status = str(body.build_status);
  if (id === undefined || projectId === undefined || !status) {
    return { ok: false, reason: 'invalid', message: 'A job event needs build_id, project_id and build_status.' };
  }
  const pipelineId = num(body.pipeline_id) ?? null;
  const commit = isObject(body.commit) ? body.commit : {};
  const sha = str(body.sha) ?? str(commit.sha) ?? '';
  const ref = str(body.ref) ?? '';
  const message = str(commit.message);
  const job: JobRecord = {
    id,
    project_id: projectId,
    name: str(body.build_name) ?? '',
    stage: str(body.build_stage) ?? '',
    ref,
    status,
    tag: body.tag === true,
    created_at: webhookTime(body.build_created_at) ?? '',
    started_at: webhookTime(body.build_started_at),
    finished_at: webhookTime(body.build_finished_at),
    duration: float(body.build_duration),
    queued_duration: float(body.build_queued_duration),
    ...(typeof body.build_allow_failure === 'boolean' ? { allow_failure: body.build_allow_failure } : {}),
    // The payload carries a failure reason whatever the status (the doc's example has one on "created").
    ...(status === 'failed' && str(body.build_failure_reason) ? { failure_reason: str(body.build_failure_reason) } : {}),
    user: user(body.user),
    runner: runner(body.runner),
    ...(jobUrl(body.project, id) ? { web_url: jobUrl(body.project, id) } : {}),
    ...(sha
      ? {
          commit: {
            // commit.id in a job event is the pipeline id, not the commit's: the SHA is the id here.
            id: sha,
            short_id: sha.slice(0, 8),
            title: message?.split('\n')[0] ?? '',
            ...(message !== undefined ? { message } : {}),
            author_name: str(commit.author_name) ?? '',
            author_email: str(commit.author_email) ?? '',
            created_at: webhookTime(commit.started_at) ?? '',
          },
        }
      : {}),
    ...(pipelineId !== null ? { pipeline: { id: pipelineId, project_id: projectId, ref, sha, status: str(commit.status) ?? '' } } : {}),
  };
  return { ok: true, event: { kind: 'job', projectId, pipelineId, jobs: [job] } };
}

function readPipelineEvent(body: Json): WebhookReadResult {
  const attributes = isObject(body.object_attributes) ? body.object_attributes : null;
  const project = isObject(body.project) ? body.project : null;
  const pipelineId = num(attributes?.id);
  const projectId = num(project?.id);
  if (!attributes || pipelineId === undefined || projectId === undefined || !Array.isArray(body.builds)) {
    return { ok: false, reason: 'invalid', message: 'A pipeline event needs object_attributes.id, project.id and builds.' };
  }
  const ref = str(attributes.ref) ?? '';
  const sha = str(attributes.sha) ?? '';
  const pipeline = {
    id: pipelineId,
    project_id: projectId,
    ref,
    sha,
    status: str(attributes.status) ?? '',
    ...(str(attributes.url) ? { web_url: str(attributes.url) } : {}),
  };
  const jobs: JobRecord[] = [];
  for (const build of body.builds) {
    if (!isObject(build)) continue;
    const id = num(build.id);
    const status = str(build.status);
    if (id === undefined || !status) return { ok: false, reason: 'invalid', message: 'Each build of a pipeline event needs id and status.' };
    jobs.push({
      id,
      project_id: projectId,
      name: str(build.name) ?? '',
      stage: str(build.stage) ?? '',
      ref,
      status,
      tag: attributes.tag === true,
      created_at: webhookTime(build.created_at) ?? '',
      started_at: webhookTime(build.started_at),
      finished_at: webhookTime(build.finished_at),
      duration: float(build.duration),
      queued_duration: float(build.queued_duration),
      ...(typeof build.allow_failure === 'boolean' ? { allow_failure: build.allow_failure } : {}),
      ...(status === 'failed' && str(build.failure_reason) ? { failure_reason: str(build.failure_reason) } : {}),
      user: user(build.user),
      runner: runner(build.runner),
      ...(jobUrl(project, id) ? { web_url: jobUrl(project, id) } : {}),
      pipeline,
    });
  }
  return { ok: true, event: { kind: 'pipeline', projectId, pipelineId, jobs } };
}

/** Reads a parsed webhook body. */
export function readWebhookEvent(body: unknown): WebhookReadResult {
  if (!isObject(body)) return { ok: false, reason: 'invalid', message: 'The body is not a JSON object.' };
  if (body.object_kind === 'build') return readJobEvent(body);
  if (body.object_kind === 'pipeline') return readPipelineEvent(body);
  return { ok: false, reason: 'unsupported', message: 'Only job (build) and pipeline events are read.' };
}

/** The state fields a webhook reports about a job: they win over a record read later, which may be newer. */
export const WEBHOOK_STATE_FIELDS = ['status', 'started_at', 'finished_at', 'duration', 'queued_duration', 'failure_reason'] as const;
