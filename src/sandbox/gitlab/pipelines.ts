/**
 * Pipeline endpoints (lib/api/ci/pipelines.rb): the list with every filter
 * of Ci::PipelinesFinder, one pipeline, create, retry, cancel, delete, and a
 * pipeline's variables, test report summary and bridges. Abilities as
 * Ci::PipelinePolicy (simplified): read_pipeline with read_build, create,
 * retry and cancel for Developer+, delete for Owner, variables for
 * Maintainer+ or the pipeline's own user.
 */
import { canDo, canReadJobs } from './job-access.js';
import { commitRecord, pipelineBasicRecord } from './job-records.js';
import { paginate } from './pagination.js';
import { Params } from './params.js';
import { formatTime, userBasicRecord, type JsonObject } from './project-records.js';
import { COMPLETED } from './ci-runner.js';
import { addPipelineRun } from './ci-seed.js';
import { FORBIDDEN, RECORD_NOT_FOUND, roleIn, UNAUTHORIZED, userProject, validationError, type ApiRequest, type RouteHandler } from './api-request.js';
import { ACCESS, JOB_STATUSES, type GitlabStore, type SandboxPipeline, type SandboxProject } from './store.js';
import type { JsonResponse } from '../http-util.js';

/** Ci::Pipeline.sources. */
const SOURCES = [
  'unknown',
  'push',
  'web',
  'trigger',
  'schedule',
  'api',
  'external',
  'pipeline',
  'chat',
  'webide',
  'merge_request_event',
  'external_pull_request_event',
  'parent_pipeline',
  'ondemand_dast_scan',
  'ondemand_dast_validation',
  'security_orchestration_policy',
  'container_registry_push',
  'duo_workflow',
  'pipeline_execution_policy_schedule',
];
const SCOPES = ['running', 'pending', 'finished', 'branches', 'tags'];
/** Ci::PipelinesFinder::ALLOWED_INDEXED_COLUMNS. */
const ORDER_COLUMNS = ['id', 'status', 'ref', 'updated_at', 'user_id'];

/** PipelineBasicWithMetadata: the list form. */
function listRecord(store: GitlabStore, pipeline: SandboxPipeline): JsonObject {
  return { ...pipelineBasicRecord(store, pipeline), name: pipeline.name ?? null };
}

/**
 * Entities::Ci::Pipeline, the answer of create, retry and cancel
 * (lib/api/ci/pipelines.rb), or with `metadata` PipelineWithMetadata (plus
 * `name`), the answer of GET /pipelines/:id.
 */
export function pipelineRecord(store: GitlabStore, pipeline: SandboxPipeline, options: { metadata?: boolean } = {}): JsonObject {
  const user = store.users.get(pipeline.userId);
  const jobs = store.pipelineJobs(pipeline.id).filter((job) => !job.retried);
  const coverages = jobs.map((job) => job.coverage).filter((c): c is number => c !== null);
  const queued = jobs
    .map((job) => (job.queuedAt !== null && job.startedAt !== null ? job.startedAt - job.queuedAt : null))
    .filter((q): q is number => q !== null);
  const group = pipeline.status === 'success' ? 'success' : pipeline.status;
  return {
    ...pipelineBasicRecord(store, pipeline),
    before_sha: pipeline.beforeSha,
    tag: pipeline.tag,
    yaml_errors: null,
    user: user ? userBasicRecord(user) : null,
    started_at: pipeline.startedAt === null ? null : formatTime(pipeline.startedAt),
    finished_at: pipeline.finishedAt === null ? null : formatTime(pipeline.finishedAt),
    committed_at: formatTime(pipeline.createdAt - 60_000),
    duration: pipeline.startedAt !== null && pipeline.finishedAt !== null ? Math.round((pipeline.finishedAt - pipeline.startedAt) / 1000) : null,
    queued_duration: queued.length > 0 ? Math.min(...queued) / 1000 : null,
    coverage: coverages.length > 0 ? (coverages.reduce((a, b) => a + b, 0) / coverages.length).toFixed(2) : null,
    detailed_status: {
      icon: `status_${group}`,
      text: group.replace(/_/g, ' '),
      label: group.replace(/_/g, ' '),
      group,
      tooltip: group.replace(/_/g, ' '),
      has_details: true,
      details_path: `/${store.projectFullPath(store.projects.get(pipeline.projectId) as SandboxProject)}/-/pipelines/${pipeline.id}`,
      illustration: null,
      favicon: `/assets/ci_favicons/favicon_status_${group}.png`,
    },
    ...(options.metadata ? { name: pipeline.name ?? null } : {}),
  };
}

/** The prologue of a pipeline route: authenticate (401), pipeline_id an Integer (400), project (404), read (403), the pipeline (404). */
function resolvePipeline(request: ApiRequest, options: { anonymous?: boolean } = {}): { project: SandboxProject; pipeline: SandboxPipeline } | JsonResponse {
  if (!request.viewer && !options.anonymous) return UNAUTHORIZED;
  const params = new Params({ pipeline_id: [request.params.pipeline_id ?? ''] });
  params.integer('pipeline_id');
  const failure = params.failure();
  if (failure) return failure;
  const project = userProject(request);
  if ('status' in project) return project;
  if (!canReadJobs(request, project)) return request.viewer ? FORBIDDEN : UNAUTHORIZED;
  const pipeline = request.store.pipelines.get(Number(request.params.pipeline_id));
  if (!pipeline || pipeline.projectId !== project.id) return RECORD_NOT_FOUND;
  return { project, pipeline };
}

/** A DateTime parameter (ISO 8601), as Grape coerces it; records "<name> is invalid" otherwise. */
function dateTime(params: Params, name: string): number | undefined {
  const raw = params.string(name);
  if (raw === undefined) return undefined;
  const ms = Date.parse(raw);
  if (Number.isNaN(ms)) {
    params.invalid(name);
    return undefined;
  }
  return ms;
}

function oneOf(params: Params, name: string, values: readonly string[]): string | undefined {
  const value = params.string(name);
  if (value !== undefined && !values.includes(value)) {
    params.invalid(name);
    return undefined;
  }
  return value;
}

/** GET /projects/:id/pipelines: every filter of Ci::PipelinesFinder, ordered by `order_by` (id) and `sort` (desc). */
export const listPipelines: RouteHandler = (request) => {
  const params = new Params(request.query);
  const scope = oneOf(params, 'scope', SCOPES);
  const status = oneOf(params, 'status', JOB_STATUSES);
  const source = oneOf(params, 'source', SOURCES);
  const orderBy = oneOf(params, 'order_by', ORDER_COLUMNS) ?? 'id';
  const sort = oneOf(params, 'sort', ['asc', 'desc']) ?? 'desc';
  const ref = params.string('ref');
  const sha = params.string('sha');
  const yamlErrors = params.boolean('yaml_errors');
  const username = params.string('username');
  const name = params.string('name');
  const updatedBefore = dateTime(params, 'updated_before');
  const updatedAfter = dateTime(params, 'updated_after');
  const createdBefore = dateTime(params, 'created_before');
  const createdAfter = dateTime(params, 'created_after');
  const pageRequest = params.page();
  const failure = params.failure();
  if (failure) return failure;
  const project = userProject(request);
  if ('status' in project) return project;
  if (!canReadJobs(request, project)) return request.viewer ? FORBIDDEN : UNAUTHORIZED;
  const { store } = request;
  const user = username === undefined ? undefined : [...store.users.values()].find((u) => u.username === username);
  let pipelines = [...store.pipelines.values()].filter((p) => p.projectId === project.id);
  if (scope === 'running') pipelines = pipelines.filter((p) => p.status === 'running');
  if (scope === 'pending') pipelines = pipelines.filter((p) => p.status === 'pending');
  if (scope === 'finished') pipelines = pipelines.filter((p) => COMPLETED.has(p.status));
  // branches and tags: the latest pipeline of each branch (or tag), as PipelinesFinder#by_scope does.
  if (scope === 'branches' || scope === 'tags') {
    const latest = new Map<string, SandboxPipeline>();
    for (const p of pipelines) if (p.tag === (scope === 'tags') && (latest.get(p.ref)?.id ?? 0) < p.id) latest.set(p.ref, p);
    pipelines = [...latest.values()];
  }
  if (status !== undefined) pipelines = pipelines.filter((p) => p.status === status);
  if (source !== undefined) pipelines = pipelines.filter((p) => p.source === source);
  if (ref !== undefined) pipelines = pipelines.filter((p) => p.ref === ref);
  if (sha !== undefined) pipelines = pipelines.filter((p) => p.sha === sha);
  // The sandbox's pipelines all have valid configurations.
  if (yamlErrors === true) pipelines = [];
  if (username !== undefined) pipelines = user ? pipelines.filter((p) => p.userId === user.id) : [];
  if (name !== undefined) pipelines = pipelines.filter((p) => p.name === name);
  if (updatedBefore !== undefined) pipelines = pipelines.filter((p) => p.updatedAt < updatedBefore);
  if (updatedAfter !== undefined) pipelines = pipelines.filter((p) => p.updatedAt > updatedAfter);
  if (createdBefore !== undefined) pipelines = pipelines.filter((p) => p.createdAt < createdBefore);
  if (createdAfter !== undefined) pipelines = pipelines.filter((p) => p.createdAt > createdAfter);
  const key = (p: SandboxPipeline): string | number =>
    orderBy === 'status' ? p.status : orderBy === 'ref' ? p.ref : orderBy === 'updated_at' ? p.updatedAt : orderBy === 'user_id' ? p.userId : p.id;
  const direction = sort === 'asc' ? 1 : -1;
  // Ties in the column go by id in the same direction (the finder's secondary order).
  pipelines.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    return (ka < kb ? -1 : ka > kb ? 1 : a.id - b.id) * direction;
  });
  const page = paginate(pipelines, pageRequest, { url: request.requestUrl, query: request.query });
  return { status: 200, body: page.items.map((p) => listRecord(store, p)), headers: page.headers };
};

/** GET /projects/:id/pipelines/:pipeline_id */
export const getPipeline: RouteHandler = (request) => {
  const found = resolvePipeline(request, { anonymous: true });
  if ('status' in found) return found;
  return { status: 200, body: pipelineRecord(request.store, found.pipeline, { metadata: true }) };
};

/**
 * POST /projects/:id/pipeline: `ref` (required) and `variables` (an array of
 * {key, value, variable_type}); 201 with the new pipeline, whose first stage
 * is released at once. An unknown ref is the service's validation error.
 */
export const createPipeline: RouteHandler = (request) => {
  if (!request.viewer) return UNAUTHORIZED;
  const params = new Params(request.input);
  params.require('ref');
  const ref = params.string('ref');
  const variables = readVariables(request.input);
  if (variables === null) params.invalid('variables');
  const failure = params.failure();
  if (failure) return failure;
  const project = userProject(request);
  if ('status' in project) return project;
  if (roleIn(request, project) < ACCESS.developer) return FORBIDDEN;
  const { store } = request;
  const refs = new Set([project.defaultBranch, ...[...store.pipelines.values()].filter((p) => p.projectId === project.id).map((p) => p.ref)]);
  if (!ref || !refs.has(ref)) return validationError({ base: ['Reference not found'] });
  const now = request.runtime.clock.now();
  const pipeline = addPipelineRun(store, { projectId: project.id, ref, userId: request.viewer.id, source: 'api', variables: variables ?? [] }, now);
  request.runtime.ci.progress(pipeline.id, now);
  return { status: 201, body: pipelineRecord(store, pipeline) };
};

/** `variables[][key]=K&variables[][value]=V` (form) or a JSON array; null when malformed. */
function readVariables(input: Record<string, string[]>): { key: string; value: string; variableType: string }[] | null {
  const keys = input['variables[][key]'];
  if (keys === undefined) return [];
  const values = input['variables[][value]'] ?? [];
  const types = input['variables[][variable_type]'] ?? [];
  if (values.length !== keys.length || keys.some((k) => !/^[A-Za-z0-9_]{1,255}$/.test(k))) return null;
  return keys.map((key, i) => ({ key, value: values[i] ?? '', variableType: types[i] === 'file' ? 'file' : 'env_var' }));
}

/** POST …/retry: retries every failed or canceled job (Ci::Pipeline#retry_failed); 201 with the pipeline. */
export const retryPipeline: RouteHandler = (request) => {
  const found = resolvePipeline(request);
  if ('status' in found) return found;
  if (!canDo(request, found.project, 'update')) return FORBIDDEN;
  const { ci } = request.runtime;
  const jobs = request.store.pipelineJobs(found.pipeline.id).filter((job) => !job.retried && (job.status === 'failed' || job.status === 'canceled'));
  for (const job of jobs) ci.retry(job, request.viewer?.id ?? job.userId);
  return { status: 201, body: pipelineRecord(request.store, found.pipeline) };
};

/** POST …/cancel: cancels every cancelable job; 200 with the pipeline, changed or not. */
export const cancelPipeline: RouteHandler = (request) => {
  const found = resolvePipeline(request);
  if ('status' in found) return found;
  if (!canDo(request, found.project, 'update')) return FORBIDDEN;
  for (const job of request.store.pipelineJobs(found.pipeline.id)) request.runtime.ci.cancel(job);
  return { status: 200, body: pipelineRecord(request.store, found.pipeline) };
};

/** DELETE /projects/:id/pipelines/:pipeline_id: Owner only; 204, its jobs gone with it. */
export const deletePipeline: RouteHandler = (request) => {
  const found = resolvePipeline(request);
  if ('status' in found) return found;
  if (roleIn(request, found.project) < ACCESS.owner) return FORBIDDEN;
  request.store.deletePipeline(found.pipeline.id);
  return { status: 204 };
};

/** GET …/variables: Maintainer+, or the pipeline's own user as Developer+ (read_pipeline_variable). */
export const listPipelineVariables: RouteHandler = (request) => {
  const found = resolvePipeline(request);
  if ('status' in found) return found;
  const role = roleIn(request, found.project);
  if (role < ACCESS.maintainer && !(role >= ACCESS.developer && found.pipeline.userId === request.viewer?.id)) return FORBIDDEN;
  return {
    status: 200,
    body: (found.pipeline.variables ?? []).map((v) => ({ variable_type: v.variableType, key: v.key, value: v.value, raw: false })),
  };
};

/** GET …/test_report_summary: JUnit counts of the jobs that uploaded a report (TestReportSummaryEntity). */
export const getTestReportSummary: RouteHandler = (request) => {
  const found = resolvePipeline(request);
  if ('status' in found) return found;
  const suites = request.store
    .pipelineJobs(found.pipeline.id)
    .filter((job) => !job.retried && job.artifacts?.junit)
    .map((job) => {
      // A fixed, job-derived report: a real one would be parsed from junit.xml.gz.
      const count = 10 + (job.id % 5);
      const failed = job.status === 'failed' ? 1 : 0;
      const skipped = job.id % 3 === 0 ? 1 : 0;
      return {
        name: job.name,
        total_time: Math.round(((job.finishedAt ?? 0) - (job.startedAt ?? 0)) / 100) / 10,
        total_count: count,
        success_count: count - failed - skipped,
        failed_count: failed,
        skipped_count: skipped,
        error_count: 0,
        build_ids: [job.id],
        suite_error: null,
      };
    });
  const sum = (key: 'total_count' | 'success_count' | 'failed_count' | 'skipped_count' | 'error_count') => suites.reduce((n, s) => n + s[key], 0);
  return {
    status: 200,
    body: {
      total: {
        time: suites.reduce((n, s) => n + s.total_time, 0),
        count: sum('total_count'),
        success: sum('success_count'),
        failed: sum('failed_count'),
        skipped: sum('skipped_count'),
        error: sum('error_count'),
        suite_error: null,
      },
      test_suites: suites,
    },
  };
};

/**
 * GET …/trigger_jobs (GitLab 19.2+, which deprecates …/bridges): the same
 * list. Before 19.2 there is no such route: GitLab's router answers
 * `{"error":"404 Not Found"}`, as for any path it does not have.
 */
export const listPipelineTriggerJobs: RouteHandler = (request) =>
  request.runtime.triggerJobs ? listPipelineBridges(request) : { status: 404, body: { error: '404 Not Found' } };

/** GET …/bridges: the sandbox's pipelines trigger no downstream pipelines, so the list is empty (counted, paginated). */
export const listPipelineBridges: RouteHandler = (request) => {
  const found = resolvePipeline(request);
  if ('status' in found) return found;
  const page = paginate([] as JsonObject[], new Params(request.query).page(), { url: request.requestUrl, query: request.query });
  return { status: 200, body: page.items, headers: page.headers };
};

/** GET /projects/:id/repository/commits/:sha: the head commit of a pipeline of the project (the sandbox has no repository). */
export const getCommit: RouteHandler = (request) => {
  const project = userProject(request);
  if ('status' in project) return project;
  if (roleIn(request, project) < ACCESS.reporter && project.visibility === 'private') return request.viewer ? FORBIDDEN : UNAUTHORIZED;
  const sha = request.params.sha ?? '';
  const pipeline = [...request.store.pipelines.values()].find(
    (p) => p.projectId === project.id && (p.sha === sha || (sha.length >= 7 && p.sha.startsWith(sha))),
  );
  if (!pipeline) return { status: 404, body: { message: '404 Commit Not Found' } };
  return {
    status: 200,
    body: {
      ...commitRecord(request.store, pipeline),
      project_id: project.id,
      status: pipeline.status,
      last_pipeline: pipelineBasicRecord(request.store, pipeline),
    },
  };
};
