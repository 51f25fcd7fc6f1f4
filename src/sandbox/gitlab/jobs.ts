/**
 * Job endpoints: GET /projects/:id/jobs, /projects/:id/pipelines/:pipeline_id/jobs,
 * /projects/:id/jobs/:job_id, and the actions cancel, retry, play, erase,
 * artifacts/keep and DELETE artifacts (lib/api/ci/jobs.rb, job_artifacts.rb).
 * Actions answer 201 (Grape's POST default) except play and keep, which set 200.
 */
import type { JsonResponse } from '../http-util.js';
import { badRequest, forbidden, RECORD_NOT_FOUND, UNAUTHORIZED, userProject, FORBIDDEN, notFound, type RouteHandler } from './api-request.js';
import { canReadJobs, resolveJob } from './job-access.js';
import { jobRecord } from './job-records.js';
import { jobKeysetPage, pageOf } from './keyset.js';
import { paginate } from './pagination.js';
import { Params } from './params.js';
import { JOB_STATUSES, type JobStatus, type SandboxJob } from './store.js';

/** `scope` or `scope[]` (coerced to an array), each value one of the job statuses. */
function readScope(params: Params): { scope: JobStatus[] | undefined; failure: JsonResponse | null } {
  const values = params.query['scope[]'] ?? params.query.scope;
  if (values === undefined || values.length === 0) return { scope: undefined, failure: null };
  if (values.some((value) => !(JOB_STATUSES as readonly string[]).includes(value))) {
    return { scope: undefined, failure: { status: 400, body: { error: 'scope does not have a valid value' } } };
  }
  return { scope: values as JobStatus[], failure: null };
}

function filterScope(jobs: SandboxJob[], scope: JobStatus[] | undefined): SandboxJob[] {
  return scope ? jobs.filter((job) => scope.includes(job.status)) : jobs;
}

/** GET /projects/:id/jobs: newest first; paginated `without_count` (no X-Total, X-Total-Pages or rel="last"), or by keyset. */
export const listJobs: RouteHandler = (request) => {
  if (!request.viewer) return UNAUTHORIZED;
  const params = new Params(request.query);
  const { scope, failure: scopeFailure } = readScope(params);
  const pageRequest = params.page();
  const failure = scopeFailure ?? params.failure();
  if (failure) return failure;
  const project = userProject(request);
  if ('status' in project) return project;
  if (!canReadJobs(request, project)) return FORBIDDEN;
  const jobs = filterScope(request.store.jobsOf(project.id), scope);
  const link = { url: request.requestUrl, query: request.query };
  const page = pageOf(
    params,
    pageRequest,
    'Ci::Build',
    () => jobKeysetPage(jobs, params, link),
    () => paginate(jobs, pageRequest, link, { withoutCount: true }),
  );
  if ('status' in page) return page;
  return { status: 200, body: page.items.map((job) => jobRecord(request.store, request.viewer, job)), headers: page.headers };
};

/**
 * GET /projects/:id/pipelines/:pipeline_id/jobs: ascending ids, retried jobs
 * only with include_retried=true; this list is counted (plain `paginate`),
 * and public projects with public jobs answer anonymous callers.
 */
export const listPipelineJobs: RouteHandler = (request) => {
  const params = new Params({ ...request.query, pipeline_id: [request.params.pipeline_id ?? ''] });
  params.integer('pipeline_id');
  const includeRetried = params.boolean('include_retried') ?? false;
  const { scope, failure: scopeFailure } = readScope(params);
  const pageRequest = params.page();
  const failure = scopeFailure ?? params.failure();
  if (failure) return failure;
  const project = userProject(request);
  if ('status' in project) return project;
  if (!canReadJobs(request, project)) return request.viewer ? FORBIDDEN : UNAUTHORIZED;
  const pipeline = request.store.pipelines.get(Number(request.params.pipeline_id));
  if (!pipeline || pipeline.projectId !== project.id) return RECORD_NOT_FOUND;
  const jobs = filterScope(
    request.store
      .pipelineJobs(pipeline.id)
      .filter((job) => includeRetried || !job.retried)
      .sort((a, b) => a.id - b.id),
    scope,
  );
  const page = paginate(jobs, pageRequest, { url: request.requestUrl, query: request.query });
  return { status: 200, body: page.items.map((job) => jobRecord(request.store, request.viewer, job)), headers: page.headers };
};

/** GET /projects/:id/jobs/:job_id */
export const getJob: RouteHandler = (request) => {
  const found = resolveJob(request, 'read');
  if ('status' in found) return found;
  return { status: 200, body: jobRecord(request.store, request.viewer, found.job) };
};

/** POST …/cancel: a job that cannot be canceled comes back unchanged (Ci::Build#cancel is a no-op then). */
export const cancelJob: RouteHandler = (request) => {
  const found = resolveJob(request, 'update');
  if ('status' in found) return found;
  request.runtime.ci.cancel(found.job);
  return { status: 201, body: jobRecord(request.store, request.viewer, found.job) };
};

/** POST …/retry: answers with the NEW job (new id, pending, no start/finish/duration). */
export const retryJob: RouteHandler = (request) => {
  const found = resolveJob(request, 'update');
  if ('status' in found) return found;
  if (!request.runtime.ci.retryable(found.job)) return forbidden('Job is not retryable');
  const retried = request.runtime.ci.retry(found.job, request.viewer?.id ?? found.job.userId);
  return { status: 201, body: jobRecord(request.store, request.viewer, retried) };
};

/**
 * POST …/play: 200 (the endpoint sets it). The job is queued as `pending`;
 * with the sandbox option playStatus 'started' the response shows the
 * spec's (GitLab ~10 doc) `started` instead, while the job itself is pending.
 */
export const playJob: RouteHandler = (request) => {
  const found = resolveJob(request, 'update');
  if ('status' in found) return found;
  if (!request.runtime.ci.playable(found.job)) return badRequest('Unplayable Job');
  request.runtime.ci.play(found.job, request.viewer?.id ?? found.job.userId);
  const status = request.runtime.playStatus === 'started' ? 'started' : undefined;
  return { status: 200, body: jobRecord(request.store, request.viewer, found.job, { status }) };
};

/** POST …/erase: removes the archive and the trace, sets erased_at; only finished jobs with something to erase. */
export const eraseJob: RouteHandler = (request) => {
  const found = resolveJob(request, 'erase');
  if ('status' in found) return found;
  const { job } = found;
  const finished = job.status === 'success' || job.status === 'failed' || job.status === 'canceled' || job.status === 'skipped';
  if (!finished || (job.artifacts === null && job.trace === null)) return forbidden('Job is not erasable!');
  job.artifacts = null;
  job.trace = null;
  job.erasedAt = request.runtime.clock.now();
  return { status: 201, body: jobRecord(request.store, request.viewer, job, { downloadUrl: true }) };
};

/** POST …/artifacts/keep: clears the expiry; 404 for a job without artifacts. */
export const keepArtifacts: RouteHandler = (request) => {
  const found = resolveJob(request, 'update');
  if ('status' in found) return found;
  if (!found.job.artifacts) return notFound();
  found.job.artifacts.expireAt = null;
  return { status: 200, body: jobRecord(request.store, request.viewer, found.job, { downloadUrl: true }) };
};

/** DELETE …/artifacts: Maintainer+; 204 whether or not there was an archive (the trace stays). */
export const deleteArtifacts: RouteHandler = (request) => {
  const found = resolveJob(request, 'destroy_artifacts');
  if ('status' in found) return found;
  found.job.artifacts = null;
  return { status: 204 };
};
