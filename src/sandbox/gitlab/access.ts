/**
 * Who can do what in the sandbox GitLab: access levels from project, group
 * (inherited down subgroups) and group-share memberships, and project
 * visibility for anonymous, signed-in and admin callers.
 */
import { ACCESS, type GitlabStore, type SandboxProject, type SandboxUser } from './store.js';

/** Direct project membership; the owner of a personal namespace is an Owner (50) member of its projects. */
export function projectMemberAccess(store: GitlabStore, userId: number, project: SandboxProject): number {
  const direct = store.projectMembers.get(project.id)?.get(userId) ?? ACCESS.none;
  const namespace = store.namespace(project.namespaceId);
  return namespace.kind === 'user' && namespace.ownerId === userId ? Math.max(direct, ACCESS.owner) : direct;
}

/** Membership in a group or any of its ancestors (the highest level wins); 0 for user namespaces. */
export function groupAccess(store: GitlabStore, userId: number, namespaceId: number): number {
  let level: number = ACCESS.none;
  for (const ns of store.namespaceChain(namespaceId)) {
    if (ns.kind !== 'group') continue;
    level = Math.max(level, store.groupMembers.get(ns.id)?.get(userId) ?? ACCESS.none);
  }
  return level;
}

/**
 * The caller's effective access level in a project: the highest of direct
 * membership, group membership, and each share with a group the caller is in
 * (capped at the share's level). Admins get no implicit level here, as in
 * GitLab's authorized-projects filters.
 */
export function accessLevel(store: GitlabStore, user: SandboxUser | null, project: SandboxProject): number {
  if (!user) return ACCESS.none;
  let level = Math.max(projectMemberAccess(store, user.id, project), groupAccess(store, user.id, project.namespaceId));
  for (const link of project.sharedWithGroups) {
    level = Math.max(level, Math.min(link.accessLevel, groupAccess(store, user.id, link.groupId)));
  }
  return level;
}

/** Public to all, internal to any signed-in user, private to members (Guest and up) and admins. */
export function canReadProject(store: GitlabStore, user: SandboxUser | null, project: SandboxProject): boolean {
  if (project.visibility === 'public') return true;
  if (!user) return false;
  if (user.admin || project.visibility === 'internal') return true;
  return accessLevel(store, user, project) >= ACCESS.guest;
}

/** Maintainer and up, or admin: sees runners_token, import_url and the CI settings. */
export function canAdminProject(store: GitlabStore, user: SandboxUser | null, project: SandboxProject): boolean {
  return user !== null && (user.admin || accessLevel(store, user, project) >= ACCESS.maintainer);
}

/** Reporter and up, or admin: GitLab's read_statistics. */
export function canReadStatistics(store: GitlabStore, user: SandboxUser | null, project: SandboxProject): boolean {
  return user !== null && (user.admin || accessLevel(store, user, project) >= ACCESS.reporter);
}

/** `owned=true`: projects in the caller's personal namespace or in a group the caller owns. */
export function ownsProject(store: GitlabStore, user: SandboxUser, project: SandboxProject): boolean {
  const namespace = store.namespace(project.namespaceId);
  if (namespace.kind === 'user') return namespace.ownerId === user.id;
  return groupAccess(store, user.id, namespace.id) >= ACCESS.owner;
}
