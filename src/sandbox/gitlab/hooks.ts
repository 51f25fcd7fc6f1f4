/**
 * Project webhooks: GET/POST /projects/:id/hooks, GET/PUT/DELETE
 * /projects/:id/hooks/:hook_id (lib/api/project_hooks.rb; Maintainer+ via
 * authorize_admin_project). The record is the current one
 * (public_api/v4/project_hook.json plus name and description); the secret
 * `token` is write-only and never rendered. The wiki toggle is
 * `wiki_page_events` on add; edit also takes the spec's (GitLab 11/12)
 * `wiki_events`. Changing the URL without a new token clears the token, as
 * current GitLab does.
 */
import type { JsonResponse } from '../http-util.js';
import { FORBIDDEN, RECORD_NOT_FOUND, roleIn, UNAUTHORIZED, userProject, type ApiRequest, type RouteHandler } from './api-request.js';
import { paginate } from './pagination.js';
import { Params } from './params.js';
import { formatTime, type JsonObject } from './project-records.js';
import { ACCESS, HOOK_EVENTS, type HookEvent, type SandboxHook, type SandboxProject } from './store.js';

const BRANCH_FILTER_STRATEGIES = ['wildcard', 'regex', 'all_branches'] as const;

/** API::Entities::ProjectHook; `token_present` and `signing_token_present` as GitLab 19.0 adds them (MR 231325), where the sandbox plays it. */
export function hookRecord(hook: SandboxHook, signing = false): JsonObject {
  const events = Object.fromEntries(HOOK_EVENTS.map((event) => [event, hook.events[event]]));
  return {
    id: hook.id,
    url: hook.url,
    name: hook.name,
    description: hook.description,
    project_id: hook.projectId,
    ...events,
    push_events_branch_filter: hook.pushEventsBranchFilter,
    branch_filter_strategy: hook.branchFilterStrategy,
    enable_ssl_verification: hook.enableSslVerification,
    alert_status: 'executable',
    disabled_until: null,
    // Hook#masked_url_variables and #masked_custom_headers: the keys only, never the values.
    url_variables: [...hook.urlVariables.keys()].map((key) => ({ key })),
    custom_headers: [...hook.customHeaders.keys()].map((key) => ({ key })),
    custom_webhook_template: hook.customWebhookTemplate,
    created_at: formatTime(hook.createdAt),
    ...(signing ? { token_present: hook.token !== null, signing_token_present: hook.signingToken !== null } : {}),
  };
}

/** authenticate! (401), user_project (404), authorize_admin_project (403). */
function adminProject(request: ApiRequest): SandboxProject | JsonResponse {
  if (!request.viewer) return UNAUTHORIZED;
  const project = userProject(request);
  if ('status' in project) return project;
  return roleIn(request, project) >= ACCESS.maintainer ? project : FORBIDDEN;
}

function findHook(request: ApiRequest, project: SandboxProject): SandboxHook | undefined {
  const hook = request.store.hooks.get(Number(request.params.hook_id));
  return hook && hook.projectId === project.id ? hook : undefined;
}

function validUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:';
  } catch {
    return false;
  }
}

interface HookInput {
  url?: string;
  token?: string;
  signingToken?: string;
  name?: string;
  description?: string;
  events: Partial<Record<HookEvent, boolean>>;
  pushEventsBranchFilter?: string;
  branchFilterStrategy?: SandboxHook['branchFilterStrategy'];
  enableSslVerification?: boolean;
  customWebhookTemplate?: string;
  customHeaders?: Map<string, string>;
  urlVariables?: Map<string, string>;
}

function readHookInput(params: Params, form: 'add' | 'edit'): HookInput {
  const events: Partial<Record<HookEvent, boolean>> = {};
  for (const event of HOOK_EVENTS) {
    const value = params.boolean(event);
    if (value !== undefined) events[event] = value;
  }
  // The spec's edit form names the wiki toggle wiki_events (GitLab 11/12); current GitLab uses wiki_page_events.
  if (form === 'edit' && events.wiki_page_events === undefined) {
    const wiki = params.boolean('wiki_events');
    if (wiki !== undefined) events.wiki_page_events = wiki;
  }
  return {
    url: params.raw('url'),
    token: params.raw('token'),
    signingToken: params.raw('signing_token'),
    name: params.raw('name'),
    description: params.raw('description'),
    events,
    pushEventsBranchFilter: params.raw('push_events_branch_filter'),
    branchFilterStrategy: params.oneOf('branch_filter_strategy', BRANCH_FILTER_STRATEGIES),
    enableSslVerification: params.boolean('enable_ssl_verification'),
    customWebhookTemplate: params.raw('custom_webhook_template'),
    customHeaders: keyValues(params, 'custom_headers'),
    urlVariables: keyValues(params, 'url_variables'),
  };
}

/** An Array of `{ key, value }` hashes (`name[][key]`, `name[][value]`); undefined when not sent. */
function keyValues(params: Params, name: string): Map<string, string> | undefined {
  const keys = params.query[`${name}[][key]`];
  const values = params.query[`${name}[][value]`] ?? [];
  if (keys === undefined) return params.query[`${name}[]`] ? new Map() : undefined;
  return new Map(keys.map((key, i) => [key, values[i] ?? '']));
}

/** GET /projects/:id/hooks */
export const listHooks: RouteHandler = (request) => {
  const params = new Params(request.query);
  const pageRequest = params.page();
  const failure = params.failure();
  if (failure) return failure;
  const project = adminProject(request);
  if ('status' in project) return project;
  const hooks = [...request.store.hooks.values()].filter((hook) => hook.projectId === project.id).sort((a, b) => a.id - b.id);
  const page = paginate(hooks, pageRequest, { url: request.requestUrl, query: request.query });
  return { status: 200, body: page.items.map((hook) => hookRecord(hook, request.runtime.webhookSigning)), headers: page.headers };
};

/** GET /projects/:id/hooks/:hook_id */
export const getHook: RouteHandler = (request) => {
  const project = adminProject(request);
  if ('status' in project) return project;
  const hook = findHook(request, project);
  return hook ? { status: 200, body: hookRecord(hook, request.runtime.webhookSigning) } : RECORD_NOT_FOUND;
};

/** POST /projects/:id/hooks: 201; `url` is required; push_events defaults to true, SSL verification on. */
export const addHook: RouteHandler = (request) => {
  const params = new Params(request.input);
  params.require('url');
  const input = readHookInput(params, 'add');
  const failure = params.failure();
  if (!request.viewer) return UNAUTHORIZED;
  if (failure) return failure;
  const project = adminProject(request);
  if ('status' in project) return project;
  if (!validUrl(input.url ?? '')) return { status: 422, body: { error: 'Invalid url given' } };
  const events = Object.fromEntries(HOOK_EVENTS.map((event) => [event, input.events[event] ?? event === 'push_events'])) as Record<HookEvent, boolean>;
  const hook: SandboxHook = {
    id: request.store.nextId('hook'),
    projectId: project.id,
    url: input.url ?? '',
    name: input.name ?? '',
    description: input.description ?? '',
    token: input.token || null,
    // Before 19.0, or with the feature off, GitLab ignores the field.
    signingToken: request.runtime.webhookSigning ? input.signingToken || null : null,
    createdAt: request.runtime.clock.now(),
    events,
    pushEventsBranchFilter: input.pushEventsBranchFilter ?? '',
    branchFilterStrategy: input.branchFilterStrategy ?? (input.pushEventsBranchFilter ? 'wildcard' : 'all_branches'),
    enableSslVerification: input.enableSslVerification ?? true,
    customWebhookTemplate: input.customWebhookTemplate ?? null,
    customHeaders: input.customHeaders ?? new Map(),
    urlVariables: input.urlVariables ?? new Map(),
  };
  request.store.hooks.set(hook.id, hook);
  return { status: 201, body: hookRecord(hook, request.runtime.webhookSigning) };
};

/** PUT /projects/:id/hooks/:hook_id: every field optional (current GitLab; the spec's GitLab required url). */
export const editHook: RouteHandler = (request) => {
  const params = new Params(request.input);
  const input = readHookInput(params, 'edit');
  if (!request.viewer) return UNAUTHORIZED;
  const failure = params.failure();
  if (failure) return failure;
  const project = adminProject(request);
  if ('status' in project) return project;
  const hook = findHook(request, project);
  if (!hook) return RECORD_NOT_FOUND;
  if (input.url !== undefined && !validUrl(input.url)) return { status: 422, body: { error: 'Invalid url given' } };
  if (input.url !== undefined && input.url !== hook.url) {
    hook.url = input.url;
    // WebHook#reset_token: a new URL without a new token drops the old secret.
    if (input.token === undefined) hook.token = null;
  }
  if (input.token !== undefined) hook.token = input.token || null;
  if (input.signingToken !== undefined && request.runtime.webhookSigning) hook.signingToken = input.signingToken || null;
  if (input.name !== undefined) hook.name = input.name;
  if (input.description !== undefined) hook.description = input.description;
  Object.assign(hook.events, input.events);
  if (input.pushEventsBranchFilter !== undefined) hook.pushEventsBranchFilter = input.pushEventsBranchFilter;
  if (input.branchFilterStrategy !== undefined) hook.branchFilterStrategy = input.branchFilterStrategy;
  if (input.enableSslVerification !== undefined) hook.enableSslVerification = input.enableSslVerification;
  if (input.customWebhookTemplate !== undefined) hook.customWebhookTemplate = input.customWebhookTemplate || null;
  if (input.customHeaders !== undefined) hook.customHeaders = input.customHeaders;
  if (input.urlVariables !== undefined) hook.urlVariables = input.urlVariables;
  return { status: 200, body: hookRecord(hook, request.runtime.webhookSigning) };
};

/**
 * DELETE /projects/:id/hooks/:hook_id. Default ('spec', as the spec and the
 * hook docs describe it): idempotent, 200 with the removed hook, 204 with an
 * empty body when there was none. Option hookDelete 'gitlab': what current
 * lib/api/project_hooks.rb does, 204 on removal and 404 for an unknown hook.
 */
export const deleteHook: RouteHandler = (request) => {
  const project = adminProject(request);
  if ('status' in project) return project;
  const hook = findHook(request, project);
  const spec = request.runtime.hookDelete === 'spec';
  if (!hook) return spec ? { status: 204 } : RECORD_NOT_FOUND;
  request.store.hooks.delete(hook.id);
  return spec ? { status: 200, body: hookRecord(hook, request.runtime.webhookSigning) } : { status: 204 };
};
