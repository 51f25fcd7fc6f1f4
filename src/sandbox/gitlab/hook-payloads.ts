/**
 * Webhook payloads of job and pipeline events, in the shapes of
 * reference/gitlab/webhooks/job_event.payload.json (`object_kind: "build"`,
 * ISO 8601 times) and pipeline_event.payload.json (`object_kind:
 * "pipeline"`, times as "2016-08-12 15:23:28 UTC": GitLab's hook data is
 * not uniform, and receivers have to parse both).
 */
import { createHash } from 'node:crypto';
import { commitRecord } from './job-records.js';
import { SHARED_RUNNER_ID } from './ci-runner.js';
import { WEB_BASE, type JsonObject } from './project-records.js';
import type { GitlabStore, SandboxJob, SandboxPipeline, SandboxProject, SandboxUser, Visibility } from './store.js';

/** Gitlab::VisibilityLevel values as hook payloads carry them. */
const VISIBILITY_LEVEL: Record<Visibility, number> = { private: 0, internal: 10, public: 20 };

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** "2016-08-12 15:23:28 UTC", the pipeline payload's time format. */
function utc(ms: number | null): string | null {
  return ms === null ? null : `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

function seconds(from: number | null, to: number | null): number | null {
  return from === null || to === null ? null : Math.round(to - from) / 1000;
}

function hookUser(user: SandboxUser | undefined): JsonObject | null {
  if (!user) return null;
  const hash = createHash('md5').update(`${user.username}@sandbox.test`).digest('hex');
  return {
    id: user.id,
    name: user.name,
    username: user.username,
    avatar_url: `https://www.gravatar.com/avatar/${hash}?s=80&d=identicon`,
    email: '[REDACTED]',
  };
}

/** Project#hook_attrs. */
function hookProject(store: GitlabStore, project: SandboxProject): JsonObject {
  const fullPath = store.projectFullPath(project);
  const host = new URL(WEB_BASE).host;
  return {
    id: project.id,
    name: project.name,
    description: project.description,
    web_url: `${WEB_BASE}/${fullPath}`,
    avatar_url: project.avatarUrl,
    git_ssh_url: `git@${host}:${fullPath}.git`,
    git_http_url: `${WEB_BASE}/${fullPath}.git`,
    namespace: store.namespace(project.namespaceId).name,
    visibility_level: VISIBILITY_LEVEL[project.visibility],
    path_with_namespace: fullPath,
    default_branch: project.defaultBranch,
    ci_config_path: project.ciConfigPath || null,
  };
}

function hookRunner(job: SandboxJob): JsonObject | null {
  if (job.runnerId === null) return null;
  return { id: SHARED_RUNNER_ID, description: 'sandbox-shared-runner', runner_type: 'instance_type', active: true, is_shared: true, tags: ['docker', 'linux'] };
}

/** Gitlab::DataBuilder::Build: the Job Hook payload. */
export function jobEventPayload(store: GitlabStore, job: SandboxJob): JsonObject | null {
  const pipeline = store.pipelines.get(job.pipelineId);
  const project = store.projects.get(job.projectId);
  if (!pipeline || !project) return null;
  const commit = commitRecord(store, pipeline);
  const projectAttrs = hookProject(store, project);
  return {
    object_kind: 'build',
    ref: pipeline.ref,
    tag: pipeline.tag,
    before_sha: pipeline.beforeSha,
    sha: pipeline.sha,
    retries_count: job.retriesCount,
    build_id: job.id,
    build_name: job.name,
    build_stage: job.stage,
    build_status: job.status,
    build_created_at: iso(job.createdAt),
    build_started_at: iso(job.startedAt),
    build_finished_at: iso(job.finishedAt),
    build_duration: seconds(job.startedAt, job.finishedAt),
    build_queued_duration: seconds(job.queuedAt ?? job.createdAt, job.startedAt),
    build_allow_failure: job.allowFailure,
    build_failure_reason: job.status === 'failed' ? (job.failureReason ?? 'unknown_failure') : null,
    pipeline_id: pipeline.id,
    runner: hookRunner(job),
    project_id: project.id,
    project_name: store.projectFullName(project),
    user: hookUser(store.users.get(job.userId)),
    // "The commit.id in the payload is the ID of the pipeline, not the ID of the commit."
    commit: {
      id: pipeline.id,
      name: null,
      sha: pipeline.sha,
      message: pipeline.commitMessage,
      author_name: commit.author_name,
      author_email: commit.author_email,
      author_url: `${WEB_BASE}/${store.users.get(pipeline.commitAuthorId)?.username ?? ''}`,
      status: pipeline.status,
      duration: seconds(pipeline.startedAt, pipeline.finishedAt),
      started_at: iso(pipeline.startedAt),
      finished_at: iso(pipeline.finishedAt),
    },
    repository: {
      name: project.name,
      url: projectAttrs.git_ssh_url,
      description: project.description,
      homepage: projectAttrs.web_url,
      git_http_url: projectAttrs.git_http_url,
      git_ssh_url: projectAttrs.git_ssh_url,
      visibility_level: VISIBILITY_LEVEL[project.visibility],
    },
    project: projectAttrs,
    environment: null,
  };
}

/** Gitlab::DataBuilder::Pipeline: the Pipeline Hook payload. */
export function pipelineEventPayload(store: GitlabStore, pipeline: SandboxPipeline): JsonObject | null {
  const project = store.projects.get(pipeline.projectId);
  if (!project) return null;
  const jobs = store.pipelineJobs(pipeline.id).filter((job) => !job.retried);
  const commit = commitRecord(store, pipeline);
  const stages = [...new Map(jobs.map((job) => [job.stageIndex, job.stage])).entries()].sort((a, b) => a[0] - b[0]).map(([, stage]) => stage);
  const web = `${WEB_BASE}/${store.projectFullPath(project)}`;
  return {
    object_kind: 'pipeline',
    object_attributes: {
      id: pipeline.id,
      iid: pipeline.iid,
      name: null,
      ref: pipeline.ref,
      tag: pipeline.tag,
      sha: pipeline.sha,
      before_sha: pipeline.beforeSha,
      source: pipeline.source,
      status: pipeline.status,
      detailed_status: pipeline.status,
      stages,
      created_at: utc(pipeline.createdAt),
      finished_at: utc(pipeline.finishedAt),
      duration: pipeline.finishedAt === null || pipeline.startedAt === null ? null : Math.round((pipeline.finishedAt - pipeline.startedAt) / 1000),
      queued_duration: null,
      variables: [],
      url: `${web}/-/pipelines/${pipeline.id}`,
    },
    merge_request: null,
    user: hookUser(store.users.get(pipeline.userId)),
    project: hookProject(store, project),
    commit: {
      id: pipeline.sha,
      message: pipeline.commitMessage,
      title: commit.title,
      timestamp: commit.created_at,
      url: commit.web_url,
      author: { name: commit.author_name, email: commit.author_email },
    },
    builds: jobs.map((job) => ({
      id: job.id,
      stage: job.stage,
      name: job.name,
      status: job.status,
      created_at: utc(job.createdAt),
      started_at: utc(job.startedAt),
      finished_at: utc(job.finishedAt),
      duration: seconds(job.startedAt, job.finishedAt),
      queued_duration: seconds(job.queuedAt ?? job.createdAt, job.startedAt),
      failure_reason: job.status === 'failed' ? job.failureReason : null,
      when: job.when,
      manual: job.when === 'manual',
      allow_failure: job.allowFailure,
      user: hookUser(store.users.get(job.userId)),
      runner: hookRunner(job),
      artifacts_file: { filename: job.artifacts ? 'artifacts.zip' : null, size: null },
      environment: null,
    })),
  };
}
