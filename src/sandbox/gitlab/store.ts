/**
 * The sandbox GitLab's in-memory state: users, tokens, namespaces, group and
 * project memberships, projects, stars. One store per sandbox instance, so
 * parallel tests never share state. Records here are the simulator's own
 * models (camelCase, epoch-millisecond times); `project-records.ts` renders
 * them into GitLab's REST shapes.
 *
 * CI (pipelines, jobs), hooks, push rules and uploads live in maps keyed
 * by their own ids, each record carrying its project id; writes allocate ids
 * with `nextId(kind)`.
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
  /** Pull mirroring (a paid-tier feature) is configured. */
  mirror: boolean;
  mirrorTriggerBuilds: boolean;
  importUrl: string | null;
  ciConfigPath: string;
  repositoryStorage: string;
  externalAuthorizationClassificationLabel: string;
  /** When the import state (fork, pull mirror) next advances, on the sandbox clock; null when settled. */
  importDueAt: number | null;
  /** Until when a housekeeping run holds its lease (409 for another run before then). */
  housekeepingUntil: number;
}

/** GitLab's Ci::HasStatus::AVAILABLE_STATUSES, the values of a job's `status` and of `scope`. */
export const JOB_STATUSES = [
  'created',
  'waiting_for_resource',
  'preparing',
  'waiting_for_callback',
  'pending',
  'running',
  'success',
  'failed',
  'canceling',
  'canceled',
  'skipped',
  'manual',
  'scheduled',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** One file inside a job's artifacts archive. */
export interface ArtifactEntry {
  path: string;
  content: Buffer;
}

/** A job's artifacts: small archives hold their files; `generatedBytes` streams one generated file instead. */
export interface JobArtifacts {
  entries: ArtifactEntry[];
  /** Size of the single generated entry `generatedPath` (largeArtifactBytes); null for ordinary archives. */
  generatedBytes: number | null;
  generatedPath: string;
  expireAt: number | null;
  /** Also a JUnit report (`junit.xml.gz`) in `artifacts[]`. */
  junit: boolean;
}

export interface SandboxPipeline {
  id: number;
  iid: number;
  projectId: number;
  ref: string;
  tag: boolean;
  sha: string;
  beforeSha: string;
  source: string;
  status: JobStatus;
  userId: number;
  createdAt: number;
  updatedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  /** The commit's message (the pipeline's head commit). */
  commitMessage: string;
  commitAuthorId: number;
  /** The pipeline's name (workflow:name), where it has one. */
  name?: string | null;
  /** Variables the pipeline was created with (POST /projects/:id/pipeline). */
  variables?: { key: string; value: string; variableType: string }[];
}

export interface SandboxJob {
  id: number;
  projectId: number;
  pipelineId: number;
  name: string;
  stage: string;
  /** Position of the stage in the pipeline (0 = first). */
  stageIndex: number;
  status: JobStatus;
  when: 'on_success' | 'manual' | 'delayed' | 'always';
  allowFailure: boolean;
  /** What the job ends in when it runs (deterministic per job). */
  outcome: 'success' | 'failed';
  failureReason: string | null;
  tagList: string[];
  coverage: number | null;
  userId: number;
  createdAt: number;
  queuedAt: number | null;
  startedAt: number | null;
  finishedAt: number | null;
  erasedAt: number | null;
  scheduledAt: number | null;
  /** Sandbox-clock time of the job's next automatic transition; null when it waits for nothing. */
  dueAt: number | null;
  runnerId: number | null;
  trace: string | null;
  artifacts: JobArtifacts | null;
  /** Whether the job produces artifacts when it succeeds (jobs that have not run yet). */
  producesArtifacts: boolean;
  /** Replaced by a retry: GitLab hides retried jobs from pipeline job lists by default. */
  retried: boolean;
  retriesCount: number;
}

export interface SandboxHook {
  id: number;
  projectId: number;
  url: string;
  name: string;
  description: string;
  /** The write-only secret, sent as X-Gitlab-Token; never rendered. */
  token: string | null;
  /** The write-only Standard Webhooks signing token (`whsec_…`, GitLab 19.0+ with webhook signing on); deliveries are signed with it. */
  signingToken: string | null;
  createdAt: number;
  events: Record<HookEvent, boolean>;
  pushEventsBranchFilter: string;
  branchFilterStrategy: 'wildcard' | 'regex' | 'all_branches';
  enableSslVerification: boolean;
  customWebhookTemplate: string | null;
  /** Headers sent with each delivery; the values are secrets GitLab never renders. */
  customHeaders: Map<string, string>;
  /** Values interpolated into `{name}` parts of the URL; secrets too. */
  urlVariables: Map<string, string>;
}

/** The event toggles of a project hook, named as the REST record names them. */
export const HOOK_EVENTS = [
  'push_events',
  'issues_events',
  'confidential_issues_events',
  'merge_requests_events',
  'tag_push_events',
  'note_events',
  'confidential_note_events',
  'job_events',
  'pipeline_events',
  'wiki_page_events',
  'deployment_events',
  'feature_flag_events',
  'releases_events',
  'milestone_events',
  'emoji_events',
  'resource_access_token_events',
  'repository_update_events',
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export interface SandboxPushRule {
  id: number;
  projectId: number;
  createdAt: number;
  commitMessageRegex: string;
  commitMessageNegativeRegex: string;
  branchNameRegex: string;
  authorEmailRegex: string;
  fileNameRegex: string;
  denyDeleteTag: boolean;
  memberCheck: boolean;
  preventSecrets: boolean;
  maxFileSize: number;
  commitCommitterCheck: boolean;
  commitCommitterNameCheck: boolean;
  rejectUnsignedCommits: boolean;
  rejectNonDcoCommits: boolean;
}

export interface SandboxUpload {
  id: number;
  projectId: number;
  secret: string;
  filename: string;
  size: number;
}

/** A CI job token (CI_JOB_TOKEN): authenticates artifact downloads as the job's user. */
export interface SandboxJobToken {
  token: string;
  jobId: number;
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
  mit: {
    key: 'mit',
    name: 'MIT License',
    nickname: null,
    htmlUrl: 'https://choosealicense.com/licenses/mit/',
    sourceUrl: 'https://opensource.org/licenses/MIT',
  },
  'apache-2.0': {
    key: 'apache-2.0',
    name: 'Apache License 2.0',
    nickname: null,
    htmlUrl: 'https://choosealicense.com/licenses/apache-2.0/',
    sourceUrl: 'https://www.apache.org/licenses/LICENSE-2.0',
  },
  'lgpl-3.0': {
    key: 'lgpl-3.0',
    name: 'GNU Lesser General Public License v3.0',
    nickname: 'GNU LGPLv3',
    htmlUrl: 'https://choosealicense.com/licenses/lgpl-3.0/',
    sourceUrl: 'https://www.gnu.org/licenses/lgpl-3.0.txt',
  },
  'cc0-1.0': {
    key: 'cc0-1.0',
    name: 'Creative Commons Zero v1.0 Universal',
    nickname: null,
    htmlUrl: 'https://choosealicense.com/licenses/cc0-1.0/',
    sourceUrl: 'https://creativecommons.org/publicdomain/zero/1.0/legalcode',
  },
};

/**
 * The jobs map, indexed by project and by pipeline, so that per-project and
 * per-pipeline lists do not scan every job once bulk seeding adds thousands.
 * A job's projectId and pipelineId never change after it is stored.
 */
export class JobMap extends Map<number, SandboxJob> {
  private readonly byProject = new Map<number, Set<SandboxJob>>();
  private readonly byPipeline = new Map<number, Set<SandboxJob>>();

  override set(id: number, job: SandboxJob): this {
    const old = super.get(id);
    if (old) this.unindex(old);
    super.set(id, job);
    this.index(this.byProject, job.projectId, job);
    this.index(this.byPipeline, job.pipelineId, job);
    return this;
  }

  override delete(id: number): boolean {
    const old = super.get(id);
    if (old) this.unindex(old);
    return super.delete(id);
  }

  override clear(): void {
    this.byProject.clear();
    this.byPipeline.clear();
    super.clear();
  }

  /** The jobs of a project, in no particular order. */
  ofProject(projectId: number): SandboxJob[] {
    return [...(this.byProject.get(projectId) ?? [])];
  }

  /** The jobs of a pipeline, in no particular order. */
  ofPipeline(pipelineId: number): SandboxJob[] {
    return [...(this.byPipeline.get(pipelineId) ?? [])];
  }

  private index(map: Map<number, Set<SandboxJob>>, key: number, job: SandboxJob): void {
    let jobs = map.get(key);
    if (!jobs) map.set(key, (jobs = new Set()));
    jobs.add(job);
  }

  private unindex(job: SandboxJob): void {
    this.byProject.get(job.projectId)?.delete(job);
    this.byPipeline.get(job.pipelineId)?.delete(job);
  }
}

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
  readonly pipelines = new Map<number, SandboxPipeline>();
  readonly jobs = new JobMap();
  readonly hooks = new Map<number, SandboxHook>();
  /** Project id -> its push rule (at most one per project). */
  readonly pushRules = new Map<number, SandboxPushRule>();
  readonly uploads = new Map<number, SandboxUpload>();
  readonly jobTokens = new Map<string, SandboxJobToken>();
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

  /** Removes a project and everything that belongs to it (GitLab's Projects::DestroyService). */
  removeProject(projectId: number): void {
    const project = this.projects.get(projectId);
    if (!project) return;
    this.setForkParent(project, null);
    for (const forkId of [...this.forksOf(projectId)]) {
      const fork = this.projects.get(forkId);
      if (fork) this.setForkParent(fork, null);
    }
    this.projects.delete(projectId);
    this.projectsByPath.delete(this.projectFullPath(project).toLowerCase());
    this.projectMembers.delete(projectId);
    for (const [userId, starred] of this.stars) if (starred.delete(projectId)) this.stars.set(userId, starred);
    this.starCounts.delete(projectId);
    for (const [id, pipeline] of this.pipelines) if (pipeline.projectId === projectId) this.pipelines.delete(id);
    for (const [id, job] of this.jobs) if (job.projectId === projectId) this.jobs.delete(id);
    for (const [id, hook] of this.hooks) if (hook.projectId === projectId) this.hooks.delete(id);
    this.pushRules.delete(projectId);
  }

  /** Moves or renames a project: `change` may set a new path and/or namespace; the path index follows. */
  relocateProject(project: SandboxProject, change: { path?: string; namespaceId?: number }): void {
    this.projectsByPath.delete(this.projectFullPath(project).toLowerCase());
    if (change.path !== undefined) project.path = change.path;
    if (change.namespaceId !== undefined) project.namespaceId = change.namespaceId;
    this.projectsByPath.set(this.projectFullPath(project).toLowerCase(), project.id);
  }

  /** Sets or clears a project's fork parent, keeping the fork lists in step. */
  setForkParent(project: SandboxProject, parentId: number | null): void {
    if (project.forkedFromId !== null) {
      const siblings = (this.forkIds.get(project.forkedFromId) ?? []).filter((id) => id !== project.id);
      this.forkIds.set(project.forkedFromId, siblings);
    }
    project.forkedFromId = parentId;
    if (parentId !== null) this.forkIds.set(parentId, [...(this.forkIds.get(parentId) ?? []), project.id]);
  }

  /** The project with this path in this namespace (case-insensitive), if any. */
  projectInNamespace(namespaceId: number, path: string): SandboxProject | undefined {
    return this.findProject(`${this.namespaceFullPath(namespaceId)}/${path}`);
  }

  /** A namespace by numeric id or by full path (case-insensitive). */
  findNamespace(idOrPath: string): SandboxNamespace | undefined {
    if (/^\d+$/.test(idOrPath)) return this.namespaces.get(Number(idOrPath));
    const wanted = idOrPath.toLowerCase();
    for (const ns of this.namespaces.values()) if (this.namespaceFullPath(ns.id).toLowerCase() === wanted) return ns;
    return undefined;
  }

  unstar(userId: number, projectId: number): void {
    if (!this.stars.get(userId)?.delete(projectId)) return;
    this.starCounts.set(projectId, Math.max((this.starCounts.get(projectId) ?? 1) - 1, 0));
  }

  /** A project's jobs, newest (highest id) first, as GitLab's jobs API orders them. */
  jobsOf(projectId: number): SandboxJob[] {
    return this.jobs.ofProject(projectId).sort((a, b) => b.id - a.id);
  }

  /** Removes a pipeline and its jobs (Ci::DestroyPipelineService). */
  deletePipeline(pipelineId: number): void {
    this.pipelines.delete(pipelineId);
    for (const job of this.jobs.ofPipeline(pipelineId)) this.jobs.delete(job.id);
  }

  /** A pipeline's jobs in stage order, then by id. */
  pipelineJobs(pipelineId: number): SandboxJob[] {
    return this.jobs.ofPipeline(pipelineId).sort((a, b) => a.stageIndex - b.stageIndex || a.id - b.id);
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
    return this.namespaceChain(id)
      .reverse()
      .map((ns) => ns.path)
      .join('/');
  }

  namespaceFullName(id: number): string {
    return this.namespaceChain(id)
      .reverse()
      .map((ns) => ns.name)
      .join(' / ');
  }

  projectFullPath(project: SandboxProject): string {
    return `${this.namespaceFullPath(project.namespaceId)}/${project.path}`;
  }

  projectFullName(project: SandboxProject): string {
    return `${this.namespaceFullName(project.namespaceId)} / ${project.name}`;
  }
}
