/**
 * Renders jobs into GitLab's REST shape (API::Entities::Ci::Job, checked
 * against reference/gitlab/schemas/public_api/v4/job.json and the current
 * doc examples): every key of the spec's job record plus the fields current
 * GitLab adds (archived, erased_at, queued_duration, tag_list,
 * runner_manager, project.ci_job_token_scope_enabled). `failure_reason` is
 * there for failed jobs only and `artifacts_file` for jobs with an archive,
 * as GitLab exposes them conditionally.
 */
import { formatTime, userBasicRecord, WEB_BASE, type JsonObject } from './project-records.js';
import { SHARED_RUNNER_ID } from './ci-runner.js';
import { buildMetadata, buildZip, generatedZipSize } from './zip-archive.js';
import type { GitlabStore, JobArtifacts, SandboxJob, SandboxPipeline, SandboxUser } from './store.js';

export const ARCHIVE_FILENAME = 'artifacts.zip';

const archiveCache = new WeakMap<JobArtifacts, { zip: Buffer; metadata: Buffer }>();

/** The artifacts archive (and metadata) of a small archive, built once per artifacts object. */
export function archiveOf(artifacts: JobArtifacts, modifiedAt: number): { zip: Buffer; metadata: Buffer } {
  let built = archiveCache.get(artifacts);
  if (!built) {
    built = { zip: buildZip(artifacts.entries, modifiedAt), metadata: buildMetadata(artifacts.entries) };
    archiveCache.set(artifacts, built);
  }
  return built;
}

/** Size of a job's archive in bytes. */
export function archiveSize(job: SandboxJob): number {
  const artifacts = job.artifacts;
  if (!artifacts) return 0;
  if (artifacts.generatedBytes !== null) return generatedZipSize(artifacts.generatedPath, artifacts.generatedBytes);
  return archiveOf(artifacts, job.finishedAt ?? job.createdAt).zip.length;
}

function seconds(fromMs: number | null, toMs: number | null): number | null {
  return fromMs === null || toMs === null ? null : Math.round(toMs - fromMs) / 1000;
}

/** UserBasic plus the profile fields the job entity's user carries (API::Entities::User). */
export function jobUserRecord(user: SandboxUser): JsonObject {
  return {
    ...userBasicRecord(user),
    created_at: formatTime(user.createdAt),
    bio: '',
    location: '',
    public_email: null,
    skype: '',
    linkedin: '',
    twitter: '',
    discord: '',
    website_url: '',
    organization: '',
    job_title: '',
    pronouns: null,
    bot: false,
    work_information: null,
    local_time: null,
  };
}

/** The head commit of a pipeline (API::Entities::Commit, public_api/v4/commit/basic.json). */
export function commitRecord(store: GitlabStore, pipeline: SandboxPipeline): JsonObject {
  const author = store.users.get(pipeline.commitAuthorId);
  const name = author?.name ?? 'Sandbox User';
  const email = `${author?.username ?? 'user'}@sandbox.test`;
  const at = formatTime(pipeline.createdAt - 60_000);
  const project = store.projects.get(pipeline.projectId);
  const web = project ? `${WEB_BASE}/${store.projectFullPath(project)}` : WEB_BASE;
  return {
    id: pipeline.sha,
    short_id: pipeline.sha.slice(0, 8),
    created_at: at,
    parent_ids: [pipeline.beforeSha],
    title: pipeline.commitMessage.split('\n')[0] ?? '',
    message: pipeline.commitMessage,
    author_name: name,
    author_email: email,
    authored_date: at,
    committer_name: name,
    committer_email: email,
    committed_date: at,
    trailers: {},
    extended_trailers: {},
    web_url: `${web}/-/commit/${pipeline.sha}`,
  };
}

/** PipelineBasic (public_api/v4/pipeline/basic.json). */
export function pipelineBasicRecord(store: GitlabStore, pipeline: SandboxPipeline): JsonObject {
  const project = store.projects.get(pipeline.projectId);
  const web = project ? `${WEB_BASE}/${store.projectFullPath(project)}` : WEB_BASE;
  return {
    id: pipeline.id,
    iid: pipeline.iid,
    project_id: pipeline.projectId,
    sha: pipeline.sha,
    ref: pipeline.ref,
    status: pipeline.status,
    source: pipeline.source,
    created_at: formatTime(pipeline.createdAt),
    updated_at: formatTime(pipeline.updatedAt),
    web_url: `${web}/-/pipelines/${pipeline.id}`,
  };
}

/** The shared runner, as current GitLab renders it (paused and runner_type; ip_address null since 17.0). */
export function runnerRecord(): JsonObject {
  return {
    id: SHARED_RUNNER_ID,
    description: 'sandbox-shared-runner',
    ip_address: null,
    active: true,
    paused: false,
    is_shared: true,
    runner_type: 'instance_type',
    name: 'gitlab-runner',
    online: true,
    status: 'online',
  };
}

function runnerManagerRecord(): JsonObject {
  return {
    id: 1,
    system_id: 's_89e5e9956577',
    version: '17.9.0',
    revision: 'c4cbe9dd',
    platform: 'linux',
    architecture: 'amd64',
    created_at: '2024-01-10T09:00:00.000Z',
    contacted_at: '2024-03-31T23:59:00.000Z',
    ip_address: '127.0.0.1',
    status: 'online',
  };
}

/** `artifacts[]` items: archive and metadata while the archive exists, the trace while it exists, JUnit when reported. */
export function artifactList(job: SandboxJob): JsonObject[] {
  const list: JsonObject[] = [];
  if (job.artifacts) {
    const metadataSize = job.artifacts.generatedBytes === null ? archiveOf(job.artifacts, job.finishedAt ?? job.createdAt).metadata.length : 186;
    list.push({ file_type: 'archive', size: archiveSize(job), filename: ARCHIVE_FILENAME, file_format: 'zip' });
    list.push({ file_type: 'metadata', size: metadataSize, filename: 'metadata.gz', file_format: 'gzip' });
  }
  if (job.trace !== null) list.push({ file_type: 'trace', size: Buffer.byteLength(job.trace), filename: 'job.log', file_format: 'raw' });
  if (job.artifacts?.junit) list.push({ file_type: 'junit', size: 750, filename: 'junit.xml.gz', file_format: 'gzip' });
  return list;
}

export interface JobRenderOptions {
  /** Erase and keep responses carry `download_url` (null), as GitLab's doc examples show. */
  downloadUrl?: boolean;
  /** Overrides the rendered status (the legacy play response's `started`). */
  status?: string;
}

/** The job record of API::Entities::Ci::Job. */
export function jobRecord(store: GitlabStore, _viewer: SandboxUser | null, job: SandboxJob, options: JobRenderOptions = {}): JsonObject {
  const pipeline = store.pipelines.get(job.pipelineId);
  const project = store.projects.get(job.projectId);
  const user = store.users.get(job.userId);
  const fullPath = project ? store.projectFullPath(project) : '';
  const record: JsonObject = {
    id: job.id,
    status: options.status ?? job.status,
    stage: job.stage,
    name: job.name,
    ref: pipeline?.ref ?? '',
    tag: pipeline?.tag ?? false,
    coverage: job.coverage,
    allow_failure: job.allowFailure,
    created_at: formatTime(job.createdAt),
    started_at: job.startedAt === null ? null : formatTime(job.startedAt),
    finished_at: job.finishedAt === null ? null : formatTime(job.finishedAt),
    erased_at: job.erasedAt === null ? null : formatTime(job.erasedAt),
    duration: seconds(job.startedAt, job.finishedAt),
    queued_duration: seconds(job.queuedAt ?? job.createdAt, job.startedAt),
    user: user ? jobUserRecord(user) : null,
    commit: pipeline ? commitRecord(store, pipeline) : null,
    pipeline: pipeline ? pipelineBasicRecord(store, pipeline) : null,
    failure_reason: job.status === 'failed' ? (job.failureReason ?? 'unknown_failure') : undefined,
    web_url: `${WEB_BASE}/${fullPath}/-/jobs/${job.id}`,
    project: { ci_job_token_scope_enabled: false },
    artifacts_file: job.artifacts ? { filename: ARCHIVE_FILENAME, size: archiveSize(job) } : undefined,
    artifacts: artifactList(job),
    runner: job.runnerId === null ? null : runnerRecord(),
    runner_manager: job.runnerId === null ? null : runnerManagerRecord(),
    artifacts_expire_at: job.artifacts?.expireAt ? formatTime(job.artifacts.expireAt) : null,
    archived: false,
    tag_list: [...job.tagList],
  };
  if (options.downloadUrl) record.download_url = null;
  // Keys GitLab exposes conditionally are dropped rather than sent as undefined.
  for (const key of Object.keys(record)) if (record[key] === undefined) delete record[key];
  return record;
}
