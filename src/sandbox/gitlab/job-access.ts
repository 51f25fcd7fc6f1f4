/**
 * Job permissions of the sandbox GitLab (ProjectPolicy and Ci::BuildPolicy,
 * simplified): read_build for Reporter+ or anyone who can see a project
 * with public jobs; update_build (cancel, retry, play, keep) for
 * Developer+; erase_build for Maintainer+ or the job's own user (Developer+);
 * destroy_artifacts for Maintainer+. Admins may do everything.
 */
import type { JsonResponse } from '../http-util.js';
import { canReadProject } from './access.js';
import { FORBIDDEN, RECORD_NOT_FOUND, roleIn, UNAUTHORIZED, userProject, type ApiRequest } from './api-request.js';
import { Params } from './params.js';
import { ACCESS, type SandboxJob, type SandboxProject } from './store.js';

export type JobAbility = 'read' | 'update' | 'erase' | 'destroy_artifacts';

/** Whether the caller may read a project's jobs (GitLab's read_build). */
export function canReadJobs(request: ApiRequest, project: SandboxProject): boolean {
  if (roleIn(request, project) >= ACCESS.reporter) return true;
  return project.publicJobs && project.visibility !== 'private' && canReadProject(request.store, request.viewer, project);
}

export function canDo(request: ApiRequest, project: SandboxProject, ability: JobAbility, job?: SandboxJob): boolean {
  const role = roleIn(request, project);
  switch (ability) {
    case 'read':
      return canReadJobs(request, project);
    case 'update':
      return role >= ACCESS.developer;
    case 'erase':
      return role >= ACCESS.maintainer || (role >= ACCESS.developer && job !== undefined && job.userId === request.viewer?.id);
    case 'destroy_artifacts':
      return role >= ACCESS.maintainer;
  }
}

/**
 * The common prologue of a job route, in GitLab's order: authenticate!
 * (401), job_id is an Integer (400), user_project (404), the project-level
 * ability (403), find_build! (404 "Not found"), the job-level ability (403).
 */
export function resolveJob(
  request: ApiRequest,
  ability: JobAbility,
  options: { anonymous?: boolean } = {},
): { project: SandboxProject; job: SandboxJob } | JsonResponse {
  if (!request.viewer && !options.anonymous) return UNAUTHORIZED;
  const params = new Params({ job_id: [request.params.job_id ?? ''] });
  params.integer('job_id');
  const failure = params.failure();
  if (failure) return failure;
  const project = userProject(request);
  if ('status' in project) return project;
  if (!canReadJobs(request, project) || (ability !== 'read' && ability !== 'erase' && !canDo(request, project, ability))) return FORBIDDEN;
  const job = request.store.jobs.get(Number(request.params.job_id));
  if (!job || job.projectId !== project.id) return RECORD_NOT_FOUND;
  if (!canDo(request, project, ability, job)) return FORBIDDEN;
  return { project, job };
}
