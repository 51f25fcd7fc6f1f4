/**
 * Project create, update and delete: POST /projects, POST
 * /projects/user/:user_id (admins), PUT /projects/:id, DELETE /projects/:id
 * (lib/api/projects.rb). Each form reads only the parameters the spec's
 * write table gives it (C, U, E); like Grape's declared_params, anything
 * else is ignored. Grape type and value errors are 400 `{"error": ...}`;
 * model validation errors are 400 `{"message": {attribute: [errors]}}`.
 */
import type { JsonResponse, UploadedFile } from '../http-util.js';
import { groupAccess } from './access.js';
import { FORBIDDEN, roleIn, UNAUTHORIZED, userProject, USER_NOT_FOUND, validationError, type ApiRequest, type RouteHandler } from './api-request.js';
import { Params } from './params.js';
import { fullProjectRecord, WEB_BASE } from './project-records.js';
import { renderContext } from './projects.js';
import { newProject } from './seed.js';
import { ACCESS, type GitlabStore, type SandboxProject, type SandboxUser, type Visibility } from './store.js';

export const VISIBILITIES: readonly Visibility[] = ['private', 'internal', 'public'];
const MERGE_METHODS = ['merge', 'rebase_merge', 'ff'] as const;
const AVATAR_FORMATS = ['png', 'jpg', 'jpeg', 'gif', 'bmp', 'tiff', 'ico', 'webp'];

type Form = 'C' | 'U' | 'E';

/** Boolean attributes of the write table, the forms that take them, and what they set. */
const BOOLEANS: { name: string; forms: Form[]; apply: (p: SandboxProject, v: boolean) => void }[] = [
  { name: 'issues_enabled', forms: ['C', 'U', 'E'], apply: (p, v) => (p.features.issues = v) },
  { name: 'merge_requests_enabled', forms: ['C', 'U', 'E'], apply: (p, v) => (p.features.mergeRequests = v) },
  { name: 'jobs_enabled', forms: ['C', 'U', 'E'], apply: (p, v) => (p.features.jobs = v) },
  { name: 'wiki_enabled', forms: ['C', 'U', 'E'], apply: (p, v) => (p.features.wiki = v) },
  { name: 'snippets_enabled', forms: ['C', 'U', 'E'], apply: (p, v) => (p.features.snippets = v) },
  { name: 'container_registry_enabled', forms: ['C', 'U', 'E'], apply: (p, v) => (p.features.containerRegistry = v) },
  { name: 'lfs_enabled', forms: ['C', 'U', 'E'], apply: (p, v) => (p.features.lfs = v) },
  { name: 'resolve_outdated_diff_discussions', forms: ['C', 'U', 'E'], apply: (p, v) => (p.resolveOutdatedDiffDiscussions = v) },
  { name: 'shared_runners_enabled', forms: ['C', 'U', 'E'], apply: (p, v) => (p.sharedRunnersEnabled = v) },
  // public_builds is the spec's (and the old API's) name of public_jobs; current GitLab takes both.
  { name: 'public_builds', forms: ['C', 'U', 'E'], apply: (p, v) => (p.publicJobs = v) },
  { name: 'public_jobs', forms: ['C', 'U', 'E'], apply: (p, v) => (p.publicJobs = v) },
  { name: 'only_allow_merge_if_pipeline_succeeds', forms: ['C', 'U', 'E'], apply: (p, v) => (p.onlyAllowMergeIfPipelineSucceeds = v) },
  { name: 'only_allow_merge_if_all_discussions_are_resolved', forms: ['C', 'U', 'E'], apply: (p, v) => (p.onlyAllowMergeIfAllDiscussionsAreResolved = v) },
  { name: 'request_access_enabled', forms: ['C', 'U', 'E'], apply: (p, v) => (p.requestAccessEnabled = v) },
  { name: 'mirror', forms: ['C', 'U', 'E'], apply: (p, v) => (p.mirror = v) },
  { name: 'mirror_trigger_builds', forms: ['C', 'U', 'E'], apply: (p, v) => (p.mirrorTriggerBuilds = v) },
  { name: 'printing_merge_request_link_enabled', forms: ['C', 'U'], apply: (p, v) => (p.printingMergeRequestLinkEnabled = v) },
  { name: 'packages_enabled', forms: ['E'], apply: (p, v) => (p.features.packages = v) },
  { name: 'only_mirror_protected_branches', forms: ['E'], apply: () => undefined },
  { name: 'mirror_overwrites_diverged_branches', forms: ['E'], apply: () => undefined },
];

/** PUT's `at_least_one_of`: every attribute the edit form takes. */
const EDIT_ATTRIBUTES = [
  'name',
  'path',
  'default_branch',
  'description',
  'visibility',
  'import_url',
  'merge_method',
  'tag_list',
  'topics',
  'avatar',
  'ci_config_path',
  'repository_storage',
  'approvals_before_merge',
  'external_authorization_classification_label',
  'mirror_user_id',
  ...BOOLEANS.filter((b) => b.forms.includes('E')).map((b) => b.name),
];

interface ProjectInput {
  name?: string;
  path?: string;
  namespaceId?: number;
  defaultBranch?: string;
  description?: string;
  visibility?: Visibility;
  mergeMethod?: SandboxProject['mergeMethod'];
  topics?: string[];
  importUrl?: string;
  ciConfigPath?: string;
  repositoryStorage?: string;
  approvalsBeforeMerge?: number;
  classificationLabel?: string;
  initializeWithReadme?: boolean;
  avatar?: UploadedFile;
  booleans: [(p: SandboxProject, v: boolean) => void, boolean][];
}

function readInput(request: ApiRequest, params: Params, form: Form): ProjectInput {
  const booleans: ProjectInput['booleans'] = [];
  for (const attribute of BOOLEANS) {
    if (!attribute.forms.includes(form)) continue;
    const value = params.boolean(attribute.name);
    if (value !== undefined) booleans.push([attribute.apply, value]);
  }
  const avatarField = request.files.avatar;
  // A File parameter sent as plain text fails Grape's type check.
  if (!avatarField && params.has('avatar')) params.invalid('avatar');
  return {
    name: params.raw('name'),
    path: params.raw('path'),
    namespaceId: form === 'E' ? undefined : params.integer('namespace_id'),
    defaultBranch: form === 'U' ? undefined : params.string('default_branch'),
    description: params.raw('description'),
    visibility: params.oneOf('visibility', VISIBILITIES),
    mergeMethod: params.oneOf('merge_method', MERGE_METHODS),
    topics: params.array('topics') ?? params.array('tag_list'),
    importUrl: params.string('import_url'),
    ciConfigPath: params.raw('ci_config_path'),
    repositoryStorage: params.string('repository_storage'),
    approvalsBeforeMerge: params.integer('approvals_before_merge'),
    classificationLabel: form === 'C' ? undefined : params.raw('external_authorization_classification_label'),
    initializeWithReadme: form === 'C' ? params.boolean('initialize_with_readme') : undefined,
    avatar: avatarField,
    booleans,
  };
}

/** ActiveSupport's String#parameterize, which GitLab uses to derive a path from a name. */
export function parameterize(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-|-$/g, '');
}

const NAME_FORMAT = /^[\p{L}\p{N}_][\p{L}\p{N}\p{Emoji_Presentation}_.+\- ]*$/u;
const PATH_FORMAT = /^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$/;

/** Project model validations on name and path within the target namespace (taken, format, length). */
export function nameAndPathErrors(store: GitlabStore, namespaceId: number, name: string, path: string, except: number | null): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const add = (key: string, message: string): void => void (errors[key] ??= []).push(message);
  if (name === '') add('name', "can't be blank");
  else if (name.length > 255) add('name', 'is too long (maximum is 255 characters)');
  else if (!NAME_FORMAT.test(name)) {
    add('name', "can contain only letters, digits, emoji, '_', '.', '+', dashes, or spaces. It must start with a letter, digit, emoji, or '_'.");
  }
  if (path === '') add('path', "can't be blank");
  else if (!PATH_FORMAT.test(path) || /\.(git|atom)$/.test(path) || path.endsWith('.')) {
    add('path', "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'");
  }
  for (const project of store.projects.values()) {
    if (project.namespaceId !== namespaceId || project.id === except) continue;
    if (name !== '' && project.name.toLowerCase() === name.toLowerCase() && !errors.name) {
      add('name', 'has already been taken');
      // Since GitLab 15 a project's name is validated on its project namespace too: gitlab.com names both keys.
      add('project_namespace.name', 'has already been taken');
    }
    if (path !== '' && project.path.toLowerCase() === path.toLowerCase() && !errors.path) add('path', 'has already been taken');
  }
  return errors;
}

/** Whether a user may create projects in a namespace: their own, or a group where they are Maintainer+ (the default project_creation_level). */
export function canCreateIn(store: GitlabStore, user: SandboxUser, namespaceId: number): boolean {
  if (user.admin) return true;
  const namespace = store.namespaces.get(namespaceId);
  if (!namespace) return false;
  if (namespace.kind === 'user') return namespace.ownerId === user.id;
  return groupAccess(store, user.id, namespaceId) >= ACCESS.maintainer;
}

function avatarErrors(avatar: UploadedFile | undefined): Record<string, string[]> {
  if (!avatar) return {};
  const extension = avatar.filename.split('.').pop()?.toLowerCase() ?? '';
  if (AVATAR_FORMATS.includes(extension)) return {};
  return { avatar: [`file format is not supported. Please try one of the following supported formats: ${AVATAR_FORMATS.join(', ')}`] };
}

function applyInput(project: SandboxProject, input: ProjectInput): void {
  if (input.description !== undefined) project.description = input.description;
  if (input.defaultBranch !== undefined) project.defaultBranch = input.defaultBranch;
  if (input.visibility !== undefined) project.visibility = input.visibility;
  if (input.mergeMethod !== undefined) project.mergeMethod = input.mergeMethod;
  if (input.topics !== undefined) project.topics = [...new Set(input.topics)];
  if (input.importUrl !== undefined) project.importUrl = input.importUrl;
  if (input.ciConfigPath !== undefined) project.ciConfigPath = input.ciConfigPath;
  if (input.repositoryStorage !== undefined) project.repositoryStorage = input.repositoryStorage;
  if (input.approvalsBeforeMerge !== undefined) project.approvalsBeforeMerge = input.approvalsBeforeMerge;
  if (input.classificationLabel !== undefined) project.externalAuthorizationClassificationLabel = input.classificationLabel;
  if (input.avatar) project.avatarUrl = `${WEB_BASE}/uploads/-/system/project/avatar/${project.id}/${encodeURIComponent(input.avatar.filename)}`;
  for (const [apply, value] of input.booleans) apply(project, value);
}

/** Shared by POST /projects and POST /projects/user/:user_id once the owner is known. */
function createProject(request: ApiRequest, params: Params, form: 'C' | 'U', owner: SandboxUser): JsonResponse {
  const input = readInput(request, params, form);
  const failure = params.failure();
  if (failure) return failure;
  const { store, viewer } = request;
  if (input.repositoryStorage !== undefined && !viewer?.admin) return FORBIDDEN;
  const namespaceId = input.namespaceId ?? owner.namespaceId;
  if (!store.namespaces.has(namespaceId) || !canCreateIn(store, owner, namespaceId)) return validationError({ namespace: ['is not valid'] });
  // Name defaults to the path; the path is generated from the name.
  const name = input.name ?? input.path ?? '';
  const path = input.path ?? parameterize(name);
  const errors = { ...nameAndPathErrors(store, namespaceId, name, path, null), ...avatarErrors(input.avatar) };
  if (Object.keys(errors).length > 0) return validationError(errors);
  const now = request.runtime.clock.now();
  const iso = new Date(now).toISOString();
  const project = newProject({
    id: store.nextId('project'),
    name,
    path,
    namespaceId,
    visibility: 'private',
    creatorId: owner.id,
    createdAt: iso,
    updatedAt: iso,
    lastActivityAt: iso,
    description: '',
    hasReadme: input.initializeWithReadme ?? false,
    openIssuesCount: 0,
    commitCount: input.initializeWithReadme ? 1 : 0,
  });
  project.statistics.repositorySize = 0;
  applyInput(project, input);
  store.addProject(project);
  return { status: 201, body: fullProjectRecord(project, renderContext({ ...request, viewer: owner }, {})) };
}

/** POST /projects: name or path required; the project goes to namespace_id or the caller's namespace. */
export const createOwnProject: RouteHandler = (request) => {
  const params = new Params(request.input);
  params.atLeastOneOf(['name', 'path']);
  if (!request.viewer) return UNAUTHORIZED;
  return createProject(request, params, 'C', request.viewer);
};

/** POST /projects/user/:user_id: admins create a project owned by another user; name is required here. */
export const createUserProject: RouteHandler = (request) => {
  const params = new Params(request.input);
  params.require('name');
  if (!request.viewer) return UNAUTHORIZED;
  if (!request.viewer.admin) return FORBIDDEN;
  const failure = params.failure();
  if (failure) return failure;
  const owner = request.store.findUser(request.params.user_id ?? '');
  if (!owner) return USER_NOT_FOUND;
  return createProject(request, params, 'U', owner);
};

/**
 * PUT /projects/:id: Maintainer+ (admin_project); renaming and changing
 * visibility need Owner (rename_project, change_visibility_level), and
 * repository_storage an admin. 400 when no attribute at all is given.
 */
export const updateProject: RouteHandler = (request) => {
  const params = new Params(request.input);
  const input = readInput(request, params, 'E');
  if (!EDIT_ATTRIBUTES.some((name) => params.has(name)) && !request.files.avatar) {
    params.atLeastOneOf(EDIT_ATTRIBUTES);
  }
  if (!request.viewer) return UNAUTHORIZED;
  const failure = params.failure();
  if (failure) return failure;
  const project = userProject(request);
  if ('status' in project) return project;
  const role = roleIn(request, project);
  if (role < ACCESS.maintainer) return FORBIDDEN;
  const renames = (input.name !== undefined && input.name !== project.name) || (input.path !== undefined && input.path !== project.path);
  if ((renames || (input.visibility !== undefined && input.visibility !== project.visibility)) && role < ACCESS.owner) return FORBIDDEN;
  if (input.repositoryStorage !== undefined && !request.viewer.admin) return FORBIDDEN;
  const name = input.name ?? project.name;
  const path = input.path ?? project.path;
  const errors = { ...nameAndPathErrors(request.store, project.namespaceId, name, path, project.id), ...avatarErrors(input.avatar) };
  if (Object.keys(errors).length > 0) return validationError(errors);
  project.name = name;
  if (path !== project.path) request.store.relocateProject(project, { path });
  applyInput(project, input);
  project.updatedAt = request.runtime.clock.now();
  return { status: 200, body: fullProjectRecord(project, renderContext(request, {})) };
};

/**
 * DELETE /projects/:id: Owner or admin; 412 when If-Unmodified-Since is
 * older than the project's updated_at (destroy_conditionally!); otherwise
 * 202 `{"message":"202 Accepted"}`, as GitLab deletes asynchronously (the
 * spec's general "DELETE returns 204" does not hold here). The sandbox
 * removes the project at once.
 */
export const deleteProject: RouteHandler = (request) => {
  if (!request.viewer) return UNAUTHORIZED;
  const project = userProject(request);
  if ('status' in project) return project;
  if (roleIn(request, project) < ACCESS.owner) return FORBIDDEN;
  const precondition = checkUnmodifiedSince(request, project.updatedAt);
  if (precondition) return precondition;
  request.store.removeProject(project.id);
  return { status: 202, body: { message: '202 Accepted' } };
};

/** check_unmodified_since!: 412 when the resource changed after the If-Unmodified-Since time. */
export function checkUnmodifiedSince(request: ApiRequest, updatedAt: number): JsonResponse | null {
  const header = request.headers['if-unmodified-since'];
  if (header === undefined) return null;
  const since = Date.parse(header);
  if (Number.isNaN(since) || updatedAt <= since) return null;
  return { status: 412, body: { message: '412 Precondition Failed' } };
}
