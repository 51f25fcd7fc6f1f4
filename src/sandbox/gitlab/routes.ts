/**
 * The route table of the sandbox GitLab (paths below /api/v4) and the
 * matcher. `:name` matches one non-empty segment, decoded; `*name` matches
 * the rest of the path (one segment or more), decoded segment by segment
 * and joined with '/', as Grape's `*artifact_path` does.
 */
import type { RouteHandler } from './api-request.js';
import { addHook, deleteHook, editHook, getHook, listHooks } from './hooks.js';
import { downloadArtifactFile, downloadArtifactFileByRef, downloadArtifacts, downloadArtifactsByRef, getTrace } from './job-artifacts.js';
import { cancelJob, deleteArtifacts, eraseJob, getJob, keepArtifacts, listJobs, listPipelineJobs, playJob, retryJob } from './jobs.js';
import {
  archiveProject,
  createForkRelation,
  deleteForkRelation,
  forkProject,
  getSnapshot,
  shareProject,
  starProject,
  startHousekeeping,
  startPullMirror,
  transferProject,
  unarchiveProject,
  unshareProject,
  unstarProject,
  uploadFile,
} from './project-actions.js';
import { createOwnProject, createUserProject, deleteProject, updateProject } from './project-writes.js';
import { getLanguages, getProject, listAllProjects, listForks, listProjectUsers, listUserProjects } from './projects.js';
import {
  cancelPipeline,
  createPipeline,
  deletePipeline,
  getCommit,
  getPipeline,
  getTestReportSummary,
  listPipelineBridges,
  listPipelineTriggerJobs,
  listPipelines,
  listPipelineVariables,
  retryPipeline,
} from './pipelines.js';
import { addPushRule, deletePushRule, editPushRule, getPushRule } from './push-rules.js';
import { getVersion } from './version.js';
import { getCurrentUser, getJobOfToken } from './current-user.js';

export interface Route {
  method: string;
  segments: string[];
  handler: RouteHandler;
}

function route(method: string, path: string, handler: RouteHandler): Route {
  return { method, segments: path.split('/'), handler };
}

export const ROUTES: Route[] = [
  route('GET', 'version', getVersion),
  route('GET', 'user', getCurrentUser),
  route('GET', 'job', getJobOfToken),
  route('GET', 'projects', listAllProjects),
  route('POST', 'projects', createOwnProject),
  route('POST', 'projects/user/:user_id', createUserProject),
  route('GET', 'projects/:id', getProject),
  route('PUT', 'projects/:id', updateProject),
  route('DELETE', 'projects/:id', deleteProject),
  route('GET', 'projects/:id/users', listProjectUsers),
  route('GET', 'projects/:id/forks', listForks),
  route('GET', 'projects/:id/languages', getLanguages),
  route('GET', 'users/:user_id/projects', listUserProjects),
  route('POST', 'projects/:id/archive', archiveProject),
  route('POST', 'projects/:id/unarchive', unarchiveProject),
  route('POST', 'projects/:id/star', starProject),
  route('POST', 'projects/:id/unstar', unstarProject),
  route('POST', 'projects/:id/fork', forkProject),
  route('DELETE', 'projects/:id/fork', deleteForkRelation),
  route('POST', 'projects/:id/fork/:forked_from_id', createForkRelation),
  route('POST', 'projects/:id/share', shareProject),
  route('DELETE', 'projects/:id/share/:group_id', unshareProject),
  route('POST', 'projects/:id/housekeeping', startHousekeeping),
  route('PUT', 'projects/:id/transfer', transferProject),
  route('POST', 'projects/:id/mirror/pull', startPullMirror),
  route('POST', 'projects/:id/uploads', uploadFile),
  route('GET', 'projects/:id/snapshot', getSnapshot),
  route('GET', 'projects/:id/hooks', listHooks),
  route('POST', 'projects/:id/hooks', addHook),
  route('GET', 'projects/:id/hooks/:hook_id', getHook),
  route('PUT', 'projects/:id/hooks/:hook_id', editHook),
  route('DELETE', 'projects/:id/hooks/:hook_id', deleteHook),
  route('GET', 'projects/:id/push_rule', getPushRule),
  route('POST', 'projects/:id/push_rule', addPushRule),
  route('PUT', 'projects/:id/push_rule', editPushRule),
  route('DELETE', 'projects/:id/push_rule', deletePushRule),
  route('GET', 'projects/:id/jobs', listJobs),
  route('GET', 'projects/:id/pipelines', listPipelines),
  route('GET', 'projects/:id/repository/commits/:sha', getCommit),
  route('POST', 'projects/:id/pipeline', createPipeline),
  route('GET', 'projects/:id/pipelines/:pipeline_id', getPipeline),
  route('DELETE', 'projects/:id/pipelines/:pipeline_id', deletePipeline),
  route('POST', 'projects/:id/pipelines/:pipeline_id/retry', retryPipeline),
  route('POST', 'projects/:id/pipelines/:pipeline_id/cancel', cancelPipeline),
  route('GET', 'projects/:id/pipelines/:pipeline_id/variables', listPipelineVariables),
  route('GET', 'projects/:id/pipelines/:pipeline_id/test_report_summary', getTestReportSummary),
  route('GET', 'projects/:id/pipelines/:pipeline_id/bridges', listPipelineBridges),
  route('GET', 'projects/:id/pipelines/:pipeline_id/trigger_jobs', listPipelineTriggerJobs),
  route('GET', 'projects/:id/pipelines/:pipeline_id/jobs', listPipelineJobs),
  route('GET', 'projects/:id/jobs/artifacts/:ref_name/download', downloadArtifactsByRef),
  route('GET', 'projects/:id/jobs/artifacts/:ref_name/raw/*artifact_path', downloadArtifactFileByRef),
  route('GET', 'projects/:id/jobs/:job_id', getJob),
  route('GET', 'projects/:id/jobs/:job_id/trace', getTrace),
  route('POST', 'projects/:id/jobs/:job_id/cancel', cancelJob),
  route('POST', 'projects/:id/jobs/:job_id/retry', retryJob),
  route('POST', 'projects/:id/jobs/:job_id/play', playJob),
  route('POST', 'projects/:id/jobs/:job_id/erase', eraseJob),
  route('GET', 'projects/:id/jobs/:job_id/artifacts', downloadArtifacts),
  route('DELETE', 'projects/:id/jobs/:job_id/artifacts', deleteArtifacts),
  route('POST', 'projects/:id/jobs/:job_id/artifacts/keep', keepArtifacts),
  route('GET', 'projects/:id/jobs/:job_id/artifacts/*artifact_path', downloadArtifactFile),
];

function decode(raw: string): string | null {
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}

/** Matches raw path segments against a route; parameters are decoded segment by segment. */
export function matchRoute(route: Route, segments: string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (let i = 0; i < route.segments.length; i++) {
    const pattern = route.segments[i] ?? '';
    if (pattern.startsWith('*')) {
      const rest = segments.slice(i);
      if (rest.length === 0 || rest.every((segment) => segment === '')) return null;
      const decoded = rest.map(decode);
      if (decoded.some((segment) => segment === null)) return null;
      params[pattern.slice(1)] = decoded.join('/');
      return params;
    }
    const raw = segments[i];
    if (raw === undefined) return null;
    if (pattern.startsWith(':')) {
      const value = raw === '' ? null : decode(raw);
      if (value === null) return null;
      params[pattern.slice(1)] = value;
    } else if (pattern !== raw) {
      return null;
    }
  }
  return route.segments.length === segments.length ? params : null;
}
