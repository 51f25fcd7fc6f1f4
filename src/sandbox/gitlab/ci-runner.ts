/**
 * The sandbox's CI and import engine: moves jobs through GitLab's states on
 * the sandbox clock, derives pipeline status from its jobs (Ci::HasStatus
 * composite status, simplified), releases later stages or skips them, and
 * advances asynchronous imports (forks, pull mirrors). Every job or pipeline
 * status change is reported to `onEvent`, which delivers project webhooks.
 *
 * Automatic transitions, one clock step (STEP_MS) apart:
 *   waiting_for_resource | preparing -> pending -> running -> success | failed (the job's `outcome`)
 *   scheduled -> pending (at its scheduled time), canceling -> canceled
 *   created -> pending when every earlier stage is done, or skipped after an earlier failure
 *   import_status scheduled -> started -> finished
 */
import { STEP_MS, type SandboxClock } from './clock.js';
import { artifactsFor, traceEnd, traceProgress, traceStart } from './job-output.js';
import type { GitlabStore, JobStatus, SandboxJob, SandboxPipeline, SandboxProject } from './store.js';

/** A status change a project hook may be told about. */
export type CiEvent = { kind: 'job'; job: SandboxJob } | { kind: 'pipeline'; pipeline: SandboxPipeline };

/** Statuses a job never leaves on its own (Ci::HasStatus::COMPLETED_STATUSES). */
export const COMPLETED: ReadonlySet<JobStatus> = new Set(['success', 'failed', 'canceled', 'skipped']);
/** Ci::HasStatus::CANCELABLE_STATUSES. */
const CANCELABLE: ReadonlySet<JobStatus> = new Set(['created', 'waiting_for_resource', 'preparing', 'waiting_for_callback', 'pending', 'running', 'scheduled']);
/** The sandbox's one shared runner. */
export const SHARED_RUNNER_ID = 32;

export class CiRunner {
  clock!: SandboxClock;

  constructor(
    private readonly store: GitlabStore,
    private readonly onEvent: (event: CiEvent) => void,
  ) {}

  /** Applies every transition due at or before `now`, earliest first, each at its own due time. */
  runDue(now: number): void {
    for (;;) {
      const job = this.nextDueJob(now);
      const project = this.nextDueImport(now);
      if (!job && !project) return;
      if (job && (!project || (job.dueAt ?? 0) <= (project.importDueAt ?? 0))) this.stepJob(job, job.dueAt ?? now);
      else if (project) this.stepImport(project, project.importDueAt ?? now);
    }
  }

  private nextDueJob(now: number): SandboxJob | undefined {
    let best: SandboxJob | undefined;
    for (const job of this.store.jobs.values()) {
      if (job.dueAt !== null && job.dueAt <= now && (!best || job.dueAt < (best.dueAt ?? 0) || (job.dueAt === best.dueAt && job.id < best.id))) best = job;
    }
    return best;
  }

  private nextDueImport(now: number): SandboxProject | undefined {
    let best: SandboxProject | undefined;
    for (const project of this.store.projects.values()) {
      if (project.importDueAt !== null && project.importDueAt <= now && (!best || project.importDueAt < (best.importDueAt ?? 0))) best = project;
    }
    return best;
  }

  private stepImport(project: SandboxProject, at: number): void {
    project.importStatus = project.importStatus === 'scheduled' ? 'started' : 'finished';
    project.importDueAt = project.importStatus === 'finished' ? null : at + STEP_MS;
    project.updatedAt = at;
  }

  /** Starts an asynchronous import (fork, pull mirror): scheduled now, started and finished on later steps. */
  scheduleImport(project: SandboxProject, at: number): void {
    project.importStatus = 'scheduled';
    project.importDueAt = at + STEP_MS;
  }

  private stepJob(job: SandboxJob, at: number): void {
    switch (job.status) {
      case 'waiting_for_resource':
      case 'preparing':
      case 'scheduled':
        this.enqueue(job, at);
        break;
      case 'pending':
        job.startedAt = at;
        job.runnerId = SHARED_RUNNER_ID;
        job.trace = traceStart(job);
        job.dueAt = at + STEP_MS;
        this.setStatus(job, 'running', at);
        break;
      case 'running':
        this.finish(job, job.outcome, at);
        break;
      case 'canceling':
        this.finish(job, 'canceled', at);
        break;
      default:
        job.dueAt = null;
        return;
    }
    this.progress(job.pipelineId, at);
  }

  private finish(job: SandboxJob, outcome: 'success' | 'failed' | 'canceled', at: number): void {
    job.finishedAt = at;
    job.dueAt = null;
    // The script's output up to now, its section closed, then the runner's last words.
    if (job.startedAt !== null) job.trace = (job.trace ?? '') + traceProgress(job, at, true) + traceEnd(job, outcome);
    if (outcome === 'failed') job.failureReason ??= 'script_failure';
    if (outcome === 'success' && job.producesArtifacts && !job.artifacts) job.artifacts = artifactsFor(job, at);
    this.setStatus(job, outcome, at);
  }

  /** Puts a job in the queue: pending now, picked up by the runner one step later. */
  private enqueue(job: SandboxJob, at: number): void {
    job.queuedAt = at;
    job.dueAt = at + STEP_MS;
    this.setStatus(job, 'pending', at);
  }

  private setStatus(job: SandboxJob, status: JobStatus, at: number): void {
    if (job.status === status) return;
    job.status = status;
    const pipeline = this.store.pipelines.get(job.pipelineId);
    if (pipeline) pipeline.updatedAt = at;
    this.onEvent({ kind: 'job', job });
  }

  /** POST cancel: a cancelable job becomes canceled at once; anything else is left as it is (Ci::Build#cancel). */
  cancel(job: SandboxJob): void {
    if (!CANCELABLE.has(job.status)) return;
    const at = this.clock.now();
    this.finish(job, 'canceled', at);
    this.progress(job.pipelineId, at);
  }

  /** Ci::Build#retryable?: a finished (success, failed, canceled) job. */
  retryable(job: SandboxJob): boolean {
    return job.status === 'success' || job.status === 'failed' || job.status === 'canceled';
  }

  /**
   * POST retry: a new job (new id) replaces the old one, pending; the old one
   * is marked retried; skipped jobs of later stages go back to created and
   * run again (Ci::RetryJobService + ResetSkippedJobsService).
   */
  retry(job: SandboxJob, userId: number): SandboxJob {
    const at = this.clock.now();
    job.retried = true;
    const clone: SandboxJob = {
      ...job,
      id: this.store.nextId('job'),
      status: 'created',
      userId,
      createdAt: at,
      queuedAt: null,
      startedAt: null,
      finishedAt: null,
      erasedAt: null,
      scheduledAt: null,
      dueAt: null,
      runnerId: null,
      trace: null,
      artifacts: null,
      failureReason: job.outcome === 'failed' ? job.failureReason : null,
      coverage: null,
      retried: false,
      retriesCount: job.retriesCount + 1,
      tagList: [...job.tagList],
    };
    if (clone.outcome !== 'failed') clone.failureReason = null;
    this.store.jobs.set(clone.id, clone);
    for (const later of this.store.pipelineJobs(job.pipelineId)) {
      if (!later.retried && later.stageIndex > job.stageIndex && later.status === 'skipped') {
        later.finishedAt = null;
        this.setStatus(later, later.when === 'manual' ? 'manual' : 'created', at);
      }
    }
    this.enqueue(clone, at);
    this.progress(job.pipelineId, at);
    return clone;
  }

  /** Ci::Build#playable?: a manual job, or a scheduled (delayed) one. */
  playable(job: SandboxJob): boolean {
    return job.status === 'manual' || job.status === 'scheduled';
  }

  /** POST play: the manual job is queued (pending) as the user who played it. */
  play(job: SandboxJob, userId: number): void {
    const at = this.clock.now();
    job.userId = userId;
    job.scheduledAt = null;
    this.enqueue(job, at);
    this.progress(job.pipelineId, at);
  }

  /** Re-derives a pipeline after a job changed: releases or skips later stages, then its composite status. */
  progress(pipelineId: number, at: number): void {
    const pipeline = this.store.pipelines.get(pipelineId);
    if (!pipeline) return;
    const jobs = this.store.pipelineJobs(pipelineId).filter((job) => !job.retried);
    const stages = [...new Set(jobs.map((job) => job.stageIndex))].sort((a, b) => a - b);
    let blocked = false;
    let failedBefore = false;
    for (const stage of stages) {
      const inStage = jobs.filter((job) => job.stageIndex === stage);
      for (const job of inStage) {
        if (job.status !== 'created') continue;
        if (failedBefore) {
          job.finishedAt = null;
          this.setStatus(job, 'skipped', at);
        } else if (!blocked) {
          if (job.when === 'manual') this.setStatus(job, 'manual', at);
          else this.enqueue(job, at);
        }
      }
      if (inStage.some((job) => !stageDone(job))) blocked = true;
      if (inStage.some((job) => (job.status === 'failed' && !job.allowFailure) || job.status === 'canceled')) failedBefore = true;
    }
    const status = compositeStatus(jobs);
    if (status === pipeline.status) return;
    pipeline.status = status;
    pipeline.updatedAt = at;
    if (status === 'running' && pipeline.startedAt === null) pipeline.startedAt = at;
    pipeline.finishedAt = COMPLETED.has(status) ? at : null;
    this.onEvent({ kind: 'pipeline', pipeline });
  }
}

/** A job that no longer holds back the next stage: finished, or a manual action that may be skipped. */
function stageDone(job: SandboxJob): boolean {
  return COMPLETED.has(job.status) || (job.status === 'manual' && job.allowFailure);
}

/** A pipeline's status from its (latest) jobs, after Gitlab::Ci::Status::Composite. */
export function compositeStatus(jobs: readonly SandboxJob[]): JobStatus {
  const has = (...statuses: JobStatus[]): boolean => jobs.some((job) => statuses.includes(job.status));
  const started = jobs.some((job) => COMPLETED.has(job.status) || job.status === 'running');
  if (jobs.length === 0) return 'created';
  if (has('running', 'canceling')) return 'running';
  if (has('pending', 'preparing', 'waiting_for_resource', 'waiting_for_callback'))
    return started ? 'running' : has('waiting_for_resource') ? 'waiting_for_resource' : has('preparing') ? 'preparing' : 'pending';
  if (has('created')) return started ? 'running' : 'created';
  if (has('scheduled')) return 'scheduled';
  if (jobs.some((job) => job.status === 'manual' && !job.allowFailure)) return 'manual';
  if (jobs.some((job) => job.status === 'failed' && !job.allowFailure)) return 'failed';
  if (has('canceled')) return 'canceled';
  if (jobs.every((job) => job.status === 'skipped')) return 'skipped';
  return 'success';
}
