/**
 * Read endpoints of projects: GET /projects, /projects/:id,
 * /projects/:id/users, /projects/:id/forks, /projects/:id/languages and
 * /users/:user_id/projects.
 */
import type { JsonResponse } from '../http-util.js';
import { groupAccess, projectMemberAccess } from './access.js';
import { findVisibleProject, PROJECT_NOT_FOUND, USER_NOT_FOUND, type ApiRequest, type RouteHandler } from './api-request.js';
import { pageOf, projectKeysetPage } from './keyset.js';
import { paginate } from './pagination.js';
import { Params } from './params.js';
import { readProjectFilters, selectProjects, type ProjectFilters } from './project-filters.js';
import { fullProjectRecord, simpleProjectRecord, userBasicRecord, type RenderContext } from './project-records.js';
import type { SandboxProject } from './store.js';

/** The rendering context of a request. */
export function renderContext(request: ApiRequest, options: { license?: boolean; statistics?: boolean; customAttributes?: boolean }): RenderContext {
  return {
    store: request.store,
    viewer: request.viewer,
    apiUrl: request.apiUrl,
    license: options.license ?? false,
    statistics: options.statistics ?? false,
    customAttributes: (options.customAttributes ?? false) && request.viewer?.admin === true,
  };
}

/** Lists with GitLab's present_projects: simple for anonymous or simple=true, else the full form. */
function listProjects(request: ApiRequest, candidates: () => Iterable<SandboxProject> | JsonResponse, options: { programmingLanguage: boolean }): JsonResponse {
  // Grape validates parameters before the endpoint looks anything up.
  const params = new Params(request.query);
  const filters: ProjectFilters = readProjectFilters(params, { programmingLanguage: options.programmingLanguage });
  const pageRequest = params.page();
  const failure = params.failure();
  if (failure) return failure;
  const found = candidates();
  if (isResponse(found)) return found;
  const selected = selectProjects(request.store, request.viewer, found, filters);
  const link = { url: request.requestUrl, query: request.query };
  const page = pageOf(
    params,
    pageRequest,
    'Project',
    () => projectKeysetPage(selected, params, link),
    () => paginate(selected, pageRequest, link),
  );
  if ('status' in page) return page;
  const ctx = renderContext(request, { statistics: filters.statistics, customAttributes: filters.withCustomAttributes });
  const simple = request.viewer === null || filters.simple;
  const body = page.items.map((project) => (simple ? simpleProjectRecord(project, ctx) : fullProjectRecord(project, ctx)));
  return { status: 200, body, headers: page.headers };
}

function isResponse(value: Iterable<SandboxProject> | JsonResponse): value is JsonResponse {
  return !(Symbol.iterator in value);
}

/** GET /projects */
export const listAllProjects: RouteHandler = (request) => listProjects(request, () => request.store.projects.values(), { programmingLanguage: true });

/** GET /users/:user_id/projects: the projects in that user's personal namespace. */
export const listUserProjects: RouteHandler = (request) =>
  listProjects(
    request,
    () => {
      const user = request.store.findUser(request.params.user_id ?? '');
      if (!user) return USER_NOT_FOUND;
      return [...request.store.projects.values()].filter((project) => project.namespaceId === user.namespaceId);
    },
    { programmingLanguage: true },
  );

/** GET /projects/:id/forks: the forks of :id the caller can see. */
export const listForks: RouteHandler = (request) =>
  listProjects(
    request,
    () => {
      const project = findVisibleProject(request);
      if (!project) return PROJECT_NOT_FOUND;
      return request.store.forksOf(project.id).flatMap((id) => request.store.projects.get(id) ?? []);
    },
    { programmingLanguage: false },
  );

/** GET /projects/:id */
export const getProject: RouteHandler = (request) => {
  const params = new Params(request.query);
  const statistics = params.boolean('statistics') ?? false;
  const license = params.boolean('license') ?? false;
  const customAttributes = params.boolean('with_custom_attributes') ?? false;
  const failure = params.failure();
  if (failure) return failure;
  const project = findVisibleProject(request);
  if (!project) return PROJECT_NOT_FOUND;
  return { status: 200, body: fullProjectRecord(project, renderContext(request, { statistics, license, customAttributes })) };
};

/** GET /projects/:id/users: direct members, members of the namespace's groups and the personal namespace's owner. */
export const listProjectUsers: RouteHandler = (request) => {
  const params = new Params(request.query);
  const search = params.string('search')?.toLowerCase();
  const skip = new Set((request.query['skip_users[]'] ?? request.query.skip_users ?? []).flatMap((v) => v.split(',')).map(Number));
  const pageRequest = params.page();
  const failure = params.failure();
  if (failure) return failure;
  const project = findVisibleProject(request);
  if (!project) return PROJECT_NOT_FOUND;
  const { store } = request;
  const users = [...store.users.values()]
    .filter((user) => projectMemberAccess(store, user.id, project) > 0 || groupAccess(store, user.id, project.namespaceId) > 0)
    .filter((user) => !skip.has(user.id))
    .filter((user) => search === undefined || user.username.toLowerCase().includes(search) || user.name.toLowerCase().includes(search))
    .sort((a, b) => a.id - b.id);
  const page = paginate(users, pageRequest, { url: request.requestUrl, query: request.query });
  return { status: 200, body: page.items.map(userBasicRecord), headers: page.headers };
};

/** GET /projects/:id/languages: language name to percentage. */
export const getLanguages: RouteHandler = (request) => {
  const project = findVisibleProject(request);
  if (!project) return PROJECT_NOT_FOUND;
  return { status: 200, body: { ...project.languages } };
};
