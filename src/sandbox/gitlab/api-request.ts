/**
 * What every route handler of the sandbox GitLab receives and the error
 * bodies they share. Bodies follow lib/api/helpers.rb: `not_found!(thing)`
 * is `{"message":"404 <thing> Not Found"}`, `forbidden!(reason)` is
 * `{"message":"403 Forbidden - <reason>"}`, an ActiveRecord miss (find by
 * id) is `{"message":"404 Not found"}`, `render_validation_error!` is a 400
 * whose message maps attributes to their errors.
 */
import type { HandlerResponse, JsonResponse, UploadedFile } from '../http-util.js';
import { accessLevel, canReadProject } from './access.js';
import type { CiRunner } from './ci-runner.js';
import type { SandboxClock } from './clock.js';
import type { GitlabStore, SandboxProject, SandboxUser } from './store.js';

/** Sandbox-wide machinery and switches the handlers need. */
export interface SandboxRuntime {
  clock: SandboxClock;
  ci: CiRunner;
  /** Status the play response shows: current GitLab's 'pending' or the spec's (GitLab ~10) 'started'. */
  playStatus: 'pending' | 'started';
  /** DELETE of a hook: the spec's 200 with the hook (empty when gone) or current GitLab's 204/404. */
  hookDelete: 'spec' | 'gitlab';
  /** Whether the job log endpoint answers `Range: bytes=N-` with 206 (GitLab's API does not: false by default). */
  traceRanges: boolean;
  /** GitLab 19.0+ with webhook signing on: hooks take `signing_token`, say `token_present`/`signing_token_present`, and deliveries are signed. */
  webhookSigning: boolean;
  /** GitLab 19.2+: a pipeline's trigger jobs at `…/trigger_jobs` (beside the deprecated `…/bridges`); older releases have no such route. */
  triggerJobs: boolean;
}

/** What a route handler gets: the caller, decoded path parameters, parameters and files. */
export interface ApiRequest {
  store: GitlabStore;
  /** The caller after Sudo; null when anonymous. */
  viewer: SandboxUser | null;
  /** Path parameters, each raw segment decoded with decodeURIComponent (a `*name` parameter joins its segments with '/'). */
  params: Record<string, string>;
  /** The query string alone. */
  query: Record<string, string[]>;
  /** Query and body parameters merged, the body winning, as Rack's `params` are. */
  input: Record<string, string[]>;
  /** Files of a multipart/form-data body, by field name. */
  files: Record<string, UploadedFile>;
  /** Request headers, names in lower case. */
  headers: Record<string, string>;
  /** The sandbox's API root, e.g. http://127.0.0.1:1234/api/v4. */
  apiUrl: string;
  /** The request URL without its query (path still encoded), for Link headers. */
  requestUrl: string;
  runtime: SandboxRuntime;
}

export type RouteHandler = (request: ApiRequest) => HandlerResponse;

export const UNAUTHORIZED: JsonResponse = { status: 401, body: { message: '401 Unauthorized' } };
export const FORBIDDEN: JsonResponse = { status: 403, body: { message: '403 Forbidden' } };
export const PROJECT_NOT_FOUND: JsonResponse = notFound('Project');
export const USER_NOT_FOUND: JsonResponse = notFound('User');
/** ActiveRecord::RecordNotFound, which lib/api/api.rb turns into this lower-case "found". */
export const RECORD_NOT_FOUND: JsonResponse = { status: 404, body: { message: '404 Not found' } };

export function notFound(what?: string): JsonResponse {
  return { status: 404, body: { message: what ? `404 ${what} Not Found` : '404 Not Found' } };
}

export function forbidden(reason?: string): JsonResponse {
  return { status: 403, body: { message: reason ? `403 Forbidden - ${reason}` : '403 Forbidden' } };
}

export function badRequest(reason?: string): JsonResponse {
  return { status: 400, body: { message: reason ? `400 Bad request - ${reason}` : '400 Bad request' } };
}

/** `render_validation_error!`: 400 with `message` mapping each attribute to its errors. */
export function validationError(errors: Record<string, string[] | Record<string, string[]>>): JsonResponse {
  return { status: 400, body: { message: errors } };
}

/** The project named by `:id` (numeric id or full path) if the caller may see it. */
export function findVisibleProject(request: ApiRequest): SandboxProject | undefined {
  const project = request.store.findProject(request.params.id ?? '');
  return project && canReadProject(request.store, request.viewer, project) ? project : undefined;
}

/** `user_project`: the visible project or 404 Project Not Found. */
export function userProject(request: ApiRequest): SandboxProject | JsonResponse {
  return findVisibleProject(request) ?? PROJECT_NOT_FOUND;
}

/** The caller's access level in a project; admins count as Owner, as GitLab's policies let them do everything. */
export function roleIn(request: ApiRequest, project: SandboxProject): number {
  if (!request.viewer) return 0;
  if (request.viewer.admin) return 50;
  return accessLevel(request.store, request.viewer, project);
}
