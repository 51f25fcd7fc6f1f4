/**
 * The sandbox GitLab's in-memory state: users, tokens, namespaces, group and
 * project memberships, projects, stars. One store per sandbox instance, so
 * parallel tests never share state. Records here are the simulator's own
 * models (camelCase, epoch-millisecond times); `project-records.ts` renders
 * them into GitLab's REST shapes.
 *
 * Later resources (jobs, pipelines, hooks, push rules) get their own maps
 * keyed by project id, and writes allocate ids with `nextId(kind)`.
 */

/** GitLab's access levels: Guest 10, Reporter 20, Developer 30, Maintainer 40, Owner 50. */
export const ACCESS = { none: 0, minimal: 5, guest: 10, planner: 15, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;

export type Visibility = 'private' | 'internal' | 'public';

export interface SandboxUser {
  id: number;
  username: string;
  name: string;
  admin: boolean;
  state: 'active' | 'blocked';
  createdAt: number;
  /** The id of the user's personal namespace. */
  namespaceId: number;
}

export interface SandboxToken {
  token: string;
  userId: number;
  /** Token scopes; `sudo` is needed to impersonate. */
  scopes: readonly string[];
}

export interface SandboxNamespace {
  id: number;
  name: string;
  path: string;
  kind: 'user' | 'group';
  /** Parent group of a subgroup; null for top-level groups and user namespaces. */
  parentId: number | null;
  /** The user a personal namespace belongs to. */
  ownerId: number | null;
  avatarUrl: string | null;
}

export interface SharedGroupLink {
  groupId: number;
  accessLevel: number;
  /** ISO date (YYYY-MM-DD) or null. */
  expiresAt: string | null;
}

export interface ProjectStatistics {
  commitCount: number;
  repositorySize: number;
  wikiSize: number;
  lfsObjectsSize: number;
  jobArtifactsSize: number;
  pipelineArtifactsSize: number;
  packagesSize: number;
  snippetsSize: number;
  uploadsSize: number;
  containerRegistrySize: number;
}

/** Project feature switches (GitLab's project_features), true = enabled. */
export interface ProjectFeatures {
  issues: boolean;
  mergeRequests: boolean;
  wiki: boolean;
  jobs: boolean;
  snippets: boolean;
  containerRegistry: boolean;
  packages: boolean;
  lfs: boolean;
}

export interface SandboxProject {
  id: number;
  name: string;
  path: string;
  namespaceId: number;
  description: string | null;
  visibility: Visibility;
  archived: boolean;
  createdAt: number;
  updatedAt: number;
  lastActivityAt: number;
  creatorId: number;
  defaultBranch: string | null;
  topics: string[];
  features: ProjectFeatures;
  /** Language name to percentage, as GET /projects/:id/languages returns it. */
  languages: Record<string, number>;
  /** Key into LICENSES, or null when the repository has no licence file. */
  licenseKey: string | null;
  hasReadme: boolean;
  avatarUrl: string | null;
  statistics: ProjectStatistics;
  forkedFromId: number | null;
  sharedWithGroups: SharedGroupLink[];
  customAttributes: { key: string; value: string }[];
  openIssuesCount: number;
  runnersToken: string;
  mergeMethod: 'merge' | 'rebase_merge' | 'ff';
  importStatus: string;
  publicJobs: boolean;
  sharedRunnersEnabled: boolean;
  requestAccessEnabled: boolean;
  onlyAllowMergeIfPipelineSucceeds: boolean;
  onlyAllowMergeIfAllDiscussionsAreResolved: boolean;
  resolveOutdatedDiffDiscussions: boolean;
  printingMergeRequestLinkEnabled: boolean;
  removeSourceBranchAfterMerge: boolean;
  approvalsBeforeMerge: number;
}

export interface License {
  key: string;
  name: string;
  nickname: string | null;
  htmlUrl: string;
  sourceUrl: string | null;
}

/** The licences the seed uses, keyed as GitLab (licensee) keys them. */
export const LICENSES: Readonly<Record<string, License>> = {
  mit: { key: 'mit', name: 'MIT License', nickname: null, htmlUrl: 'https://choosealicense.com/licenses/mit/', sourceUrl: 'https://opensource.org/licenses/MIT' },
  'apache-2.0': { key: 'apache-2.0', name: 'Apache License 2.0', nickname: null, htmlUrl: 'https://choosealicense.com/licenses/apache-2.0/', sourceUrl: 'https://www.apache.org/licenses/LICENSE-2.0' },
  'lgpl-3.0': { key: 'lgpl-3.0', name: 'GNU Lesser General Public License v3.0', nickname: 'GNU LGPLv3', htmlUrl: 'https://choosealicense.com/licenses/lgpl-3.0/', sourceUrl: 'https://www.gnu.org/licenses/lgpl-3.0.txt' },
  'cc0-1.0': { key: 'cc0-1.0', name: 'Creative Commons Zero v1.0 Universal', nickname: null, htmlUrl: 'https://choosealicense.com/licenses/cc0-1.0/', sourceUrl: 'https://creativecommons.org/publicdomain/zero/1.0/legalcode' },
};

export class GitlabStore {
  readonly users = new Map<number, SandboxUser>();
  readonly tokens = new Map<string, SandboxToken>();
  readonly namespaces = new Map<number, SandboxNamespace>();
  /** Group id -> user id -> direct access level in that group. */
  readonly groupMembers = new Map<number, Map<number, number>>();
  /** Project id -> user id -> direct access level in that project. */
  readonly projectMembers = new Map<number, Map<number, number>>();
  /** Projects in insertion order (ids ascending). */
  readonly projects = new Map<number, SandboxProject>();
  /** User id -> ids of the projects the user starred. */
  readonly stars = new Map<number, Set<number>>();
  private readonly starCounts = new Map<number, number>();
  private readonly forkIds = new Map<number, number[]>();
  private readonly projectsByPath = new Map<string, number>();
  private readonly sequences = new Map<string, number>();

  /** Allocates the next id of a kind ('project', 'job', 'hook', …) after every id used so far. */
  nextId(kind: string): number {
    const next = (this.sequences.get(kind) ?? 0) + 1;
    this.sequences.set(kind, next);
    return next;
  }

  /** Makes sure `nextId(kind)` never hands out `id` or anything below it. */
  reserveId(kind: string, id: number): void {
    if ((this.sequences.get(kind) ?? 0) < id) this.sequences.set(kind, id);
  }

  addUser(user: SandboxUser): void {
    this.users.set(user.id, user);
    this.reserveId('user', user.id);
  }

  addNamespace(namespace: SandboxNamespace): void {
    this.namespaces.set(namespace.id, namespace);
    this.reserveId('namespace', namespace.id);
  }

  addGroupMember(groupId: number, userId: number, accessLevel: number): void {
    let members = this.groupMembers.get(groupId);
    if (!members) this.groupMembers.set(groupId, (members = new Map()));
    members.set(userId, accessLevel);
  }

  addProjectMember(projectId: number, userId: number, accessLevel: number): void {
    let members = this.projectMembers.get(projectId);
    if (!members) this.projectMembers.set(projectId, (members = new Map()));
    members.set(userId, accessLevel);
  }

  addProject(project: SandboxProject): void {
    this.projects.set(project.id, project);
    this.reserveId('project', project.id);
    this.projectsByPath.set(this.projectFullPath(project).toLowerCase(), project.id);
    if (project.forkedFromId !== null) {
      const forks = this.forkIds.get(project.forkedFromId) ?? [];
      forks.push(project.id);
      this.forkIds.set(project.forkedFromId, forks);
    }
  }

  star(userId: number, projectId: number): void {
    let starred = this.stars.get(userId);
    if (!starred) this.stars.set(userId, (starred = new Set()));
    if (starred.has(projectId)) return;
    starred.add(projectId);
    this.starCounts.set(projectId, (this.starCounts.get(projectId) ?? 0) + 1);
  }

  hasStarred(userId: number, projectId: number): boolean {
    return this.stars.get(userId)?.has(projectId) ?? false;
  }

  starCount(projectId: number): number {
    return this.starCounts.get(projectId) ?? 0;
  }

  /** Ids of the direct forks of a project, oldest first. */
  forksOf(projectId: number): readonly number[] {
    return this.forkIds.get(projectId) ?? [];
  }

  /** A user by numeric id or by username (case-insensitive), as GitLab's find_user does. */
  findUser(idOrUsername: string): SandboxUser | undefined {
    if (/^\d+$/.test(idOrUsername)) return this.users.get(Number(idOrUsername));
    const wanted = idOrUsername.toLowerCase();
    for (const user of this.users.values()) if (user.username.toLowerCase() === wanted) return user;
    return undefined;
  }

  /** A project by numeric id or by full path (case-insensitive), regardless of who asks. */
  findProject(idOrPath: string): SandboxProject | undefined {
    if (/^\d+$/.test(idOrPath)) return this.projects.get(Number(idOrPath));
    const id = this.projectsByPath.get(idOrPath.toLowerCase());
    return id === undefined ? undefined : this.projects.get(id);
  }

  namespace(id: number): SandboxNamespace {
    const namespace = this.namespaces.get(id);
    if (!namespace) throw new Error(`sandbox store: no namespace ${id}`);
    return namespace;
  }

  /** The namespace and its ancestors, innermost first. */
  namespaceChain(id: number): SandboxNamespace[] {
    const chain: SandboxNamespace[] = [];
    for (let ns: SandboxNamespace | undefined = this.namespace(id); ns; ns = ns.parentId === null ? undefined : this.namespace(ns.parentId)) {
      chain.push(ns);
    }
    return chain;
  }

  namespaceFullPath(id: number): string {
    return this.namespaceChain(id).reverse().map((ns) => ns.path).join('/');
  }

  namespaceFullName(id: number): string {
    return this.namespaceChain(id).reverse().map((ns) => ns.name).join(' / ');
  }

  projectFullPath(project: SandboxProject): string {
    return `${this.namespaceFullPath(project.namespaceId)}/${project.path}`;
  }

  projectFullName(project: SandboxProject): string {
    return `${this.namespaceFullName(project.namespaceId)} / ${project.name}`;
  }
}
