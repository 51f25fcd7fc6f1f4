/**
 * Project actions (lib/api/projects.rb, project_forks, uploads, mirror):
 * archive/unarchive, star/unstar, fork and fork relations, share/unshare,
 * housekeeping, transfer, pull mirror, uploads and the repository snapshot.
 * POSTs answer 201 (Grape's default) unless GitLab sets another status.
 */
import { createHash } from 'node:crypto';
import type { JsonResponse } from '../http-util.js';
import { canReadProject, groupAccess } from './access.js';
import { FORBIDDEN, notFound, roleIn, UNAUTHORIZED, userProject, type ApiRequest, type RouteHandler } from './api-request.js';
import { STEP_MS } from './clock.js';
import { Params } from './params.js';
import { fullProjectRecord } from './project-records.js';
import { canCreateIn, checkUnmodifiedSince, nameAndPathErrors, VISIBILITIES } from './project-writes.js';
import { renderContext } from './projects.js';
import { newProject } from './seed.js';
import { ACCESS, type SandboxProject, type Visibility } from './store.js';
import { tarSize, tarStream, type TarFile } from './tar-archive.js';

/** Gitlab::Access.all_values: the levels a share may grant. */
const SHARE_LEVELS = [ACCESS.guest, ACCESS.planner, ACCESS.reporter, ACCESS.developer, ACCESS.maintainer, ACCESS.owner];
const VISIBILITY_RANK: Record<Visibility, number> = { private: 0, internal: 10, public: 20 };

/** authenticate! (401) then user_project (404) then a minimum role (403). */
function projectWithRole(request: ApiRequest, minimum: number): SandboxProject | JsonResponse {
  if (!request.viewer) return UNAUTHORIZED;
  const project = userProject(request);
  if ('status' in project) return project;
  return roleIn(request, project) >= minimum ? project : FORBIDDEN;
}

function detail(request: ApiRequest, project: SandboxProject, status = 201): JsonResponse {
  return { status, body: fullProjectRecord(project, renderContext(request, {})) };
}

function setArchived(archived: boolean): RouteHandler {
  return (request) => {
    // archive_project: Owner or admin. Idempotent: an archived project archives again without change.
    const project = projectWithRole(request, ACCESS.owner);
    if ('status' in project) return project;
    if (project.archived !== archived) {
      project.archived = archived;
      project.updatedAt = request.runtime.clock.now();
    }
    return detail(request, project);
  };
}

/** POST /projects/:id/archive */
export const archiveProject = setArchived(true);
/** POST /projects/:id/unarchive */
export const unarchiveProject = setArchived(false);

function setStarred(starred: boolean): RouteHandler {
  return (request) => {
    const project = projectWithRole(request, ACCESS.none);
    if ('status' in project) return project;
    const viewer = request.viewer;
    if (!viewer) return UNAUTHORIZED;
    // 304 for star when already starred (the spec and GitLab's code) and for unstar when not starred.
    if (request.store.hasStarred(viewer.id, project.id) === starred) return { status: 304 };
    if (starred) request.store.star(viewer.id, project.id);
    else request.store.unstar(viewer.id, project.id);
    // The star responses carry the project without owner, permissions and statistics.
    return { status: 201, body: fullProjectRecord(project, renderContext(request, {}), 'star') };
  };
}

/** POST /projects/:id/star */
export const starProject = setStarred(true);
/** POST /projects/:id/unstar */
export const unstarProject = setStarred(false);

/** ProjectPolicy :fork_project: anyone who can read a public or internal project, Reporter+ on a private one. */
function canFork(request: ApiRequest, project: SandboxProject): boolean {
  if (!request.viewer || !canReadProject(request.store, request.viewer, project)) return false;
  return project.visibility !== 'private' || roleIn(request, project) >= ACCESS.reporter;
}

/**
 * POST /projects/:id/fork: the target namespace is `namespace_id`,
 * `namespace_path` or the deprecated `namespace` (id or path), else the
 * caller's own. The fork is created at once with import_status "scheduled"
 * and becomes "started" and "finished" on later clock steps. A name or path
 * already taken in the target answers 409 with the validation map
 * (`conflict!(forked_project.errors.messages)`).
 */
export const forkProject: RouteHandler = (request) => {
  const params = new Params(request.input);
  const namespaceId = params.integer('namespace_id');
  const namespacePath = params.string('namespace_path');
  const namespaceRef = params.string('namespace');
  const name = params.raw('name');
  const path = params.raw('path');
  const description = params.raw('description');
  const visibility = params.oneOf('visibility', VISIBILITIES);
  if (!request.viewer) return UNAUTHORIZED;
  const failure = params.failure();
  if (failure) return failure;
  const viewer = request.viewer;
  const source = userProject(request);
  if ('status' in source) return source;
  if (!canFork(request, source)) return notFound();
  const { store } = request;
  const reference = namespaceId !== undefined ? String(namespaceId) : (namespacePath ?? namespaceRef);
  const namespace = reference === undefined ? store.namespaces.get(viewer.namespaceId) : store.findNamespace(reference);
  if (!namespace) return notFound('Namespace');
  if (!canCreateIn(store, viewer, namespace.id)) return notFound('Target Namespace');
  const forkName = name ?? source.name;
  const forkPath = path ?? source.path;
  const errors = nameAndPathErrors(store, namespace.id, forkName, forkPath, null);
  if (Object.keys(errors).length > 0) return { status: 409, body: { message: errors } };
  const now = request.runtime.clock.now();
  const iso = new Date(now).toISOString();
  // A fork can be no more visible than its source.
  const wanted = visibility ?? source.visibility;
  const forkVisibility = VISIBILITY_RANK[wanted] <= VISIBILITY_RANK[source.visibility] ? wanted : source.visibility;
  const fork = newProject({
    id: store.nextId('project'),
    name: forkName,
    path: forkPath,
    namespaceId: namespace.id,
    visibility: forkVisibility,
    creatorId: viewer.id,
    createdAt: iso,
    updatedAt: iso,
    lastActivityAt: iso,
    description: description ?? source.description,
    topics: [...source.topics],
    languages: { ...source.languages },
    licenseKey: source.licenseKey,
    defaultBranch: source.defaultBranch,
    openIssuesCount: 0,
    forkedFromId: source.id,
    mergeMethod: source.mergeMethod,
  });
  request.runtime.ci.scheduleImport(fork, now);
  store.addProject(fork);
  return { status: 201, body: fullProjectRecord(fork, renderContext(request, {})) };
};

/**
 * POST /projects/:id/fork/:forked_from_id: marks an existing project as a
 * fork (Owner or admin, per the spec); 409 "Project already forked" when it
 * already has a parent.
 */
export const createForkRelation: RouteHandler = (request) => {
  const project = projectWithRole(request, ACCESS.owner);
  if ('status' in project) return project;
  const source = request.store.findProject(request.params.forked_from_id ?? '');
  if (!source || !canReadProject(request.store, request.viewer, source)) return notFound('Source Project');
  if (!canFork(request, source)) return FORBIDDEN;
  if (project.forkedFromId !== null) return { status: 409, body: { message: 'Project already forked' } };
  if (source.id === project.id) return { status: 409, body: { message: 'Project already forked' } };
  request.store.setForkParent(project, source.id);
  project.updatedAt = request.runtime.clock.now();
  return detail(request, project);
};

/** DELETE /projects/:id/fork: Owner or admin (remove_fork_project); 204, or 304 when the project is no fork. */
export const deleteForkRelation: RouteHandler = (request) => {
  const project = projectWithRole(request, ACCESS.owner);
  if ('status' in project) return project;
  const precondition = checkUnmodifiedSince(request, project.updatedAt);
  if (precondition) return precondition;
  if (project.forkedFromId === null) return { status: 304 };
  request.store.setForkParent(project, null);
  project.updatedAt = request.runtime.clock.now();
  return { status: 204 };
};

/**
 * POST /projects/:id/share: Maintainer+; 201 with the link. A group the
 * caller cannot see is 404; sharing twice is 409 "Group already shared
 * with this group" (ProjectGroupLink's uniqueness validation), as is sharing
 * with the project's own group.
 */
export const shareProject: RouteHandler = (request) => {
  const params = new Params(request.input);
  params.require('group_id');
  params.require('group_access');
  const groupId = params.integer('group_id');
  const level = params.integerOneOf('group_access', SHARE_LEVELS);
  const expiresAt = params.date('expires_at');
  if (!request.viewer) return UNAUTHORIZED;
  const failure = params.failure();
  if (failure) return failure;
  const project = projectWithRole(request, ACCESS.maintainer);
  if ('status' in project) return project;
  const { store, viewer } = request;
  const group = groupId === undefined ? undefined : store.namespaces.get(groupId);
  if (group?.kind !== 'group' || !(viewer.admin || groupAccess(store, viewer.id, group.id) > 0)) return notFound('Group');
  if (store.namespaceChain(project.namespaceId).some((ns) => ns.id === group.id)) {
    return { status: 409, body: { message: 'Project cannot be shared with the group it is in or one of its ancestors.' } };
  }
  if (project.sharedWithGroups.some((link) => link.groupId === group.id)) return { status: 409, body: { message: 'Group already shared with this group' } };
  project.sharedWithGroups.push({ groupId: group.id, accessLevel: level ?? ACCESS.guest, expiresAt: expiresAt ?? null });
  return {
    status: 201,
    body: { id: store.nextId('group_link'), project_id: project.id, group_id: group.id, group_access: level, expires_at: expiresAt ?? null },
  };
};

/** DELETE /projects/:id/share/:group_id: Maintainer+; 204, or 404 "Group Link Not Found". */
export const unshareProject: RouteHandler = (request) => {
  const project = projectWithRole(request, ACCESS.maintainer);
  if ('status' in project) return project;
  const groupId = Number(request.params.group_id);
  const index = project.sharedWithGroups.findIndex((link) => link.groupId === groupId);
  if (index < 0) return notFound('Group Link');
  project.sharedWithGroups.splice(index, 1);
  return { status: 204 };
};

/**
 * POST /projects/:id/housekeeping: Maintainer+; 201 (GitLab renders the
 * service's nil result: `null`). A second run while one holds the lease
 * (one clock step here) is 409, as HousekeepingService::LeaseTaken is.
 */
export const startHousekeeping: RouteHandler = (request) => {
  const project = projectWithRole(request, ACCESS.maintainer);
  if ('status' in project) return project;
  const now = request.runtime.clock.now();
  if (project.housekeepingUntil > now)
    return { status: 409, body: { message: 'Somebody already triggered housekeeping for this resource within the past 24 hours' } };
  project.housekeepingUntil = now + STEP_MS;
  return { status: 201, body: null };
};

/**
 * PUT /projects/:id/transfer: Owner or admin (change_namespace); 200 with
 * the moved project. The target must accept new projects from the caller
 * and must not hold the same path (400, rendered as GitLab's
 * "Failed to transfer project <errors>").
 */
export const transferProject: RouteHandler = (request) => {
  const params = new Params(request.input);
  params.require('namespace');
  const reference = params.string('namespace');
  if (!request.viewer) return UNAUTHORIZED;
  const failure = params.failure();
  if (failure) return failure;
  const project = projectWithRole(request, ACCESS.owner);
  if ('status' in project) return project;
  const { store, viewer } = request;
  const namespace = store.findNamespace(reference ?? '');
  if (!namespace) return notFound('Namespace');
  const reason =
    namespace.id === project.namespaceId
      ? 'Project is already in this namespace.'
      : !canCreateIn(store, viewer, namespace.id)
        ? 'Transfer failed, please contact an admin.'
        : store.projectInNamespace(namespace.id, project.path)
          ? 'Project with same name or path in target namespace already exists'
          : null;
  if (reason) return { status: 400, body: { message: `Failed to transfer project {:namespace=>["${reason}"]}` } };
  store.relocateProject(project, { namespaceId: namespace.id });
  project.updatedAt = request.runtime.clock.now();
  return detail(request, project, 200);
};

/**
 * POST /projects/:id/mirror/pull (paid tier): Maintainer+; 400 "The project
 * is not mirrored" unless pull mirroring is set up; otherwise 200, as
 * ee/lib/api/project_mirror.rb sets it (not 202), and the mirror's
 * import_status goes scheduled -> started -> finished on the clock.
 */
export const startPullMirror: RouteHandler = (request) => {
  const project = projectWithRole(request, ACCESS.maintainer);
  if ('status' in project) return project;
  if (!project.mirror) return { status: 400, body: { message: 'The project is not mirrored' } };
  request.runtime.ci.scheduleImport(project, request.runtime.clock.now());
  return { status: 200, body: null };
};

const IMAGE_EXTENSIONS = ['png', 'jpg', 'jpeg', 'gif', 'bmp', 'tiff', 'ico', 'webp', 'svg'];

/**
 * POST /projects/:id/uploads (multipart `file`): 201 with id, alt, url,
 * full_path and markdown; `url` is relative to the project, `full_path`
 * (GitLab 17) to the instance. Images get `![alt](url)`, other files `[name](url)`.
 */
export const uploadFile: RouteHandler = (request) => {
  const params = new Params(request.input);
  const file = request.files.file;
  if (!file) {
    if (params.has('file')) params.invalid('file');
    else params.require('file');
  }
  if (!request.viewer) return UNAUTHORIZED;
  const failure = params.failure();
  if (failure || !file) return failure ?? { status: 400, body: { error: 'file is missing' } };
  const project = userProject(request);
  if ('status' in project) return project;
  if (project.visibility === 'private' && roleIn(request, project) < ACCESS.guest) return FORBIDDEN;
  const { store } = request;
  const id = store.nextId('upload');
  const secret = createHash('md5').update(`${project.id}:${id}:${file.filename}`).digest('hex');
  store.uploads.set(id, { id, projectId: project.id, secret, filename: file.filename, size: file.content.length });
  const url = `/uploads/${secret}/${file.filename}`;
  const dot = file.filename.lastIndexOf('.');
  const alt = dot > 0 ? file.filename.slice(0, dot) : file.filename;
  const image = IMAGE_EXTENSIONS.includes(file.filename.slice(dot + 1).toLowerCase());
  return {
    status: 201,
    body: {
      id,
      alt,
      url,
      full_path: `/-/project/${project.id}/uploads/${secret}/${file.filename}`,
      markdown: image ? `![${alt}](${url})` : `[${file.filename}](${url})`,
    },
  };
};

/** The files of a bare repository as `git` would lay it out; enough to look like one when unpacked. */
function repositoryFiles(project: SandboxProject, fullPath: string, wiki: boolean, at: number): TarFile[] {
  const branch = wiki ? 'main' : (project.defaultBranch ?? 'main');
  const head = createHash('sha1')
    .update(`${fullPath}${wiki ? '.wiki' : ''}`)
    .digest('hex');
  const files: [string, string][] = [
    ['HEAD', `ref: refs/heads/${branch}\n`],
    ['config', '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n'],
    ['description', `${wiki ? 'Wiki of ' : ''}${project.name}\n`],
    [`refs/heads/${branch}`, `${head}\n`],
    ['packed-refs', `# pack-refs with: peeled fully-peeled sorted\n${head} refs/heads/${branch}\n`],
  ];
  return files.map(([path, content]) => ({ path, content: Buffer.from(content), mtime: at }));
}

/**
 * GET /projects/:id/snapshot: admins only (authenticated_as_admin!); an
 * uncompressed tar of the bare repository, or of the wiki with wiki=true,
 * streamed (application/x-tar).
 */
export const getSnapshot: RouteHandler = (request) => {
  const params = new Params(request.query);
  const wiki = params.boolean('wiki') ?? false;
  if (!request.viewer) return UNAUTHORIZED;
  if (!request.viewer.admin) return FORBIDDEN;
  const failure = params.failure();
  if (failure) return failure;
  const project = userProject(request);
  if ('status' in project) return project;
  const fullPath = request.store.projectFullPath(project);
  const files = repositoryFiles(project, fullPath, wiki, project.lastActivityAt);
  const filename = `${project.path}${wiki ? '.wiki' : ''}.git.tar`;
  return {
    status: 200,
    headers: {
      'Content-Type': 'application/x-tar',
      'Content-Disposition': `attachment; filename="${filename}"`,
      'Content-Length': String(tarSize(files)),
    },
    open: () => tarStream(files),
  };
};
