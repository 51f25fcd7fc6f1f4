/**
 * Deterministic demo data of the sandbox GitLab. Every `startGitlabSandbox`
 * call seeds a fresh store with exactly this, so tests can rely on it.
 *
 * USERS (DEMO_USERS; send the token as `Private-Token`, `Authorization: Bearer`,
 * `?private_token=` or `?access_token=`)
 *   id 1 root   "Administrator"  admin  tokens admin-token (scopes api, sudo), admin-nosudo-token (api only)
 *   id 2 demo   "Demo User"             token demo-token
 *   id 3 alice  "Alice Liddell"         token alice-token
 *   id 4 bob    "Bob Builder"           token bob-token (active, not blocked)
 *   id 5 carol  "Carol Danvers"  state blocked, no token (shows `blocked` in project user lists)
 *
 * NAMESPACES: user namespaces 1 root, 2 demo, 3 alice, 4 bob, 5 carol (namespace id = user id);
 * groups 6 demo-group, 7 platform, 8 platform/tools (subgroup, parent_id 7); 9 bulk (only with bulkPublicProjects).
 * Group members: demo-group: demo 50 Owner, bob 20 Reporter.
 *                platform: alice 50 Owner, bob 40 Maintainer, demo 10 Guest.
 *                platform/tools: demo 30 Developer (plus everything inherited from platform).
 *
 * PROJECTS (id path visibility; notes; effective access demo/alice/bob, "-" = none)
 *    1 platform/core            public    Ruby 66.69 JavaScript 22.98 HTML 7.91 CoffeeScript 2.42; MIT;
 *                                          shared with demo-group at 30; carol direct Reporter; 20 forks;
 *                                          starred by demo, alice, bob (star_count 3); custom attribute tier=gold   30/50/40
 *    2 platform/infra           private   HCL, Shell; issues disabled                                                    10/50/40
 *    3 platform/docs            internal  HTML, CSS, JavaScript; merge requests disabled                                 10/50/40
 *    4 platform/tools/cli       public    archived; Go                                                                   30/50/40
 *    5 demo-group/website       public    TypeScript, CSS, HTML; Apache-2.0; starred by demo                             50/-/20
 *    6 demo-group/api           private   Python, Dockerfile; MIT; alice direct Developer; shared with platform at 20    50/30/20
 *    7 demo/playground          public    JavaScript; merge requests disabled; bob direct Developer; starred by alice    50/-/30
 *    8 demo/dotfiles            private   Shell, Vim Script; no README                                                   50/-/-
 *    9 demo/legacy-app          internal  archived; PHP, JavaScript; default branch master                               50/-/-
 *   10 alice/secret-notes       private   Ruby; demo cannot see it (404)                                                 -/50/-
 *   11 alice/recipes            public    Python; CC0-1.0; starred by demo                                               -/50/-
 *   12 bob/rust-experiments     internal  Rust, Shell; issues and merge requests disabled                               -/-/50
 * 4000000013 root/admin-scripts private   Shell; only root (admin) sees it                                               -/-/-
 *   14..33 forks of platform/core, fork i (1..20) has id 13+i, path core-fork-i, name "Core Fork i",
 *          namespace by i % 5: 1 demo, 2 alice, 3 bob, 4 root, 0 demo-group; all public except
 *          fork 17 (id 30, alice/core-fork-17) private and fork 18 (id 31, bob/core-fork-18) internal.
 *          Anonymous sees 18 forks, demo and bob 19, alice and root 20.
 *   bulk: ids 4000001001.. in group `bulk`, public, path bulk-project-N, created before every seeded project.
 *   bulk forks (only with `bulkForks: { count, parents }`, which needs bulkPublicProjects >= parents):
 *          ids 4000100001.., path bulk-fork-N, name "Bulk Fork N", public, in the personal namespaces
 *          demo, alice, bob, root in turn (so each has an owner), fork N of bulk project
 *          4000001001 + (N - 1) % parents: many forks share a few parents.
 *
 * Demo's starred projects: 1, 5, 11. Root (admin) sees everything but is a member of nothing
 * except its own namespace and the bulk group. Every project has statistics; timestamps are fixed.
 * platform/docs (3) is a pull mirror (mirror true, import_url https://github.com/example/docs.git).
 *
 * PIPELINES AND JOBS (ci-seed.ts). Statuses as seeded; "moving" pipelines advance on the sandbox
 * clock (clock.ts, one step = STEP_MS = 3 s of sandbox time; with `clock: 'manual'` only advance()).
 *   platform/core (1), jobs run by alice unless noted:
 *     101 main    success  1001 build success (archive: dist/app.js dist/app.css dist/index.html
 *                               coverage/summary.json README.txt; junit; trace; tags docker, linux)
 *                          1002 rspec success (coverage 87.5)   1003 rubocop failed, allow_failure,
 *                          failure_reason script_failure   1004 deploy-staging success
 *                          1005 deploy-production MANUAL (allow_failure)
 *     102 v1.2.0 (tag) success  1006 build, 1007 package, 1008 release, all success; 1006 and 1007
 *                          have archives that never expire. 1007 is the LARGE ARTIFACT job: with
 *                          `largeArtifactBytes` its archive holds one stored generated file
 *                          package/core-1.2.0.bin of that many bytes.
 *     103 main    failed   1009 build success (archive) 1010 rspec failed script_failure
 *                          1011 deploy-staging skipped
 *     104 main    running  MOVING. 1012 build success (archive, junit) 1013 rspec running -> success
 *                          1014 rubocop pending -> running -> failed (allow_failure) 1015 deploy-staging
 *                          created -> ... success (archive) 1016 deploy-production created -> manual.
 *                          Ends success after 4 steps, then "latest successful main" is 104, not 101.
 *     105 feature/login running (run by demo) MOVING. 1017 lint preparing, 1018 unit waiting_for_resource,
 *                          1019 e2e scheduled (due 3 steps after start), 1020 cleanup canceling.
 *   demo/playground (7), run by demo:
 *     201 main success  2001 test success, 2002 pages success (archive)
 *     202 main running  MOVING. 2003 test running -> failed (script_failure), then 2004 pages
 *                       created -> skipped and 2005 deploy-manual created -> skipped.
 *   platform/infra (2, private; demo is Guest so cannot read jobs): 301 main success, 3001 plan (archive), run by bob.
 *   demo-group/api (6, private; bob Reporter reads, cannot cancel): 401 main failed, 4001 docker success
 *                       (archive), 4002 pytest failed runner_system_failure.
 *   demo (Developer of platform/core) runs no finished job there, so demo cannot erase any of them;
 *   a job demo retries or plays becomes demo's, and demo may erase it once it has finished.
 *   root/admin-scripts (4000000013): 4100000001 main success, 4294967296 shellcheck and
 *                       4294967297 backup-dry-run (archive), both success, run by root: ids past 2^32.
 *   Finished jobs have traces; created, pending, manual and skipped ones have none. New ids (retry)
 *   continue after 4294967297; new pipelines after 4100000001 (or after the bulk ones).
 *   BULK CI (only with `bulkJobs: { perProject, perPipeline, seeded }`, ci-seed.ts seedBulkCi):
 *     every bulk project gets `perProject` finished jobs on main (run by root), and each seeded project
 *     id in `seeded` that many more (run by alice), in pipelines of `perPipeline` (default 5) jobs;
 *     stages build, test, deploy in turn; every tenth job failed (script_failure), the rest succeeded.
 *     Pipeline ids count up from 4200000001 and job ids from 6747393391, so they list before the
 *     seeded ones (newest first).
 * JOB TOKEN: sandbox-ci-job-token-1013 (job 1013, user alice), as JOB-TOKEN header or ?job_token=,
 *   on artifact downloads only. GitLab revokes a job token when its job ends; the sandbox keeps this
 *   one valid so tests do not race the clock.
 * HOOKS: 1 on platform/core (https://hooks.sandbox.test/core; push, tag push, merge request events;
 *   token set, so it is never shown), 2 on demo/playground (http://hooks.sandbox.test/playground;
 *   issues and wiki page events; SSL verification off). Neither has job or pipeline events, so the
 *   seed never delivers anything. New hooks get ids from 3.
 * PUSH RULES: platform/core has push rule 1 (commit_message_regex "Fixes \d+\..*", max_file_size 5,
 *   prevent_secrets); no other project has one.
 */
import { createHash } from 'node:crypto';
import { ADMIN_SCRIPTS_ID, seedBulkCi, seedCi } from './ci-seed.js';
import { ACCESS, GitlabStore, type ProjectFeatures, type SandboxProject, type SandboxUser, type Visibility } from './store.js';

/** A demo account of the sandbox and its personal access token. */
export interface DemoUser {
  id: number;
  username: string;
  name: string;
  token: string;
  admin: boolean;
}

/** The demo accounts of the sandbox GitLab (see the comment at the top of this file). */
export const DEMO_USERS: readonly DemoUser[] = Object.freeze([
  { id: 1, username: 'root', name: 'Administrator', token: 'admin-token', admin: true },
  { id: 2, username: 'demo', name: 'Demo User', token: 'demo-token', admin: false },
  { id: 3, username: 'alice', name: 'Alice Liddell', token: 'alice-token', admin: false },
  { id: 4, username: 'bob', name: 'Bob Builder', token: 'bob-token', admin: false },
]);

/** Id of platform/core, the parent of the 20 seeded forks. */
export const FORK_PARENT_ID = 1;
/** Number of forks of platform/core. */
export const FORK_COUNT = 20;
/** First id of the generated bulk projects. */
export const BULK_FIRST_ID = 4_000_001_001;
/** First id of the generated bulk forks. */
export const BULK_FORK_FIRST_ID = 4_000_100_001;

const t = (iso: string): number => Date.parse(iso);
const DAY = 86_400_000;

function runnersToken(projectId: number): string {
  return createHash('sha1').update(`runners-token-${projectId}`).digest('hex').slice(0, 30);
}

const ALL_FEATURES: ProjectFeatures = {
  issues: true,
  mergeRequests: true,
  wiki: true,
  jobs: true,
  snippets: true,
  containerRegistry: true,
  packages: true,
  lfs: true,
};

export interface ProjectSeed {
  id: number;
  name: string;
  path: string;
  namespaceId: number;
  visibility: Visibility;
  creatorId: number;
  createdAt: string;
  lastActivityAt: string;
  updatedAt: string;
  description?: string | null;
  archived?: boolean;
  topics?: string[];
  features?: Partial<ProjectFeatures>;
  languages?: Record<string, number>;
  licenseKey?: string | null;
  hasReadme?: boolean;
  avatarUrl?: string | null;
  forkedFromId?: number | null;
  defaultBranch?: string | null;
  commitCount?: number;
  openIssuesCount?: number;
  mergeMethod?: SandboxProject['mergeMethod'];
}

function makeProject(seed: ProjectSeed): SandboxProject {
  const commitCount = seed.commitCount ?? 10 + ((seed.id * 37) % 400);
  const repositorySize = 50_000 + seed.id * 104_729;
  return {
    id: seed.id,
    name: seed.name,
    path: seed.path,
    namespaceId: seed.namespaceId,
    description: seed.description === undefined ? `${seed.name} of the sandbox.` : seed.description,
    visibility: seed.visibility,
    archived: seed.archived ?? false,
    createdAt: t(seed.createdAt),
    updatedAt: t(seed.updatedAt),
    lastActivityAt: t(seed.lastActivityAt),
    creatorId: seed.creatorId,
    defaultBranch: seed.defaultBranch === undefined ? 'main' : seed.defaultBranch,
    topics: seed.topics ?? [],
    features: { ...ALL_FEATURES, ...seed.features },
    languages: seed.languages ?? {},
    licenseKey: seed.licenseKey ?? null,
    hasReadme: seed.hasReadme ?? true,
    avatarUrl: seed.avatarUrl ?? null,
    statistics: {
      commitCount,
      repositorySize,
      wikiSize: seed.id % 3 === 0 ? 4_096 : 0,
      lfsObjectsSize: seed.id % 4 === 0 ? 1_048_576 : 0,
      jobArtifactsSize: seed.id * 2_048,
      pipelineArtifactsSize: 0,
      packagesSize: 0,
      snippetsSize: 0,
      uploadsSize: seed.id % 2 === 0 ? 12_345 : 0,
      containerRegistrySize: 0,
    },
    forkedFromId: seed.forkedFromId ?? null,
    sharedWithGroups: [],
    customAttributes: [],
    openIssuesCount: seed.openIssuesCount ?? seed.id % 7,
    runnersToken: runnersToken(seed.id),
    mergeMethod: seed.mergeMethod ?? 'merge',
    importStatus: seed.forkedFromId ? 'finished' : 'none',
    publicJobs: true,
    sharedRunnersEnabled: true,
    requestAccessEnabled: true,
    onlyAllowMergeIfPipelineSucceeds: seed.id % 2 === 1,
    onlyAllowMergeIfAllDiscussionsAreResolved: false,
    resolveOutdatedDiffDiscussions: false,
    printingMergeRequestLinkEnabled: true,
    removeSourceBranchAfterMerge: true,
    approvalsBeforeMerge: 0,
    mirror: false,
    mirrorTriggerBuilds: false,
    importUrl: null,
    ciConfigPath: '',
    repositoryStorage: 'default',
    externalAuthorizationClassificationLabel: '',
    importDueAt: null,
    housekeepingUntil: 0,
  };
}

/** A project record with every default a new project gets (create, fork); `seed` fields as in the demo data. */
export function newProject(seed: ProjectSeed): SandboxProject {
  return makeProject(seed);
}

function user(id: number, username: string, name: string, createdAt: string, extra: Partial<SandboxUser> = {}): SandboxUser {
  return { id, username, name, admin: false, state: 'active', createdAt: t(createdAt), namespaceId: id, ...extra };
}

/** Options of `seedStore`. */
export interface SeedOptions {
  /** Extra generated public projects in group `bulk` (ids from 1001). Default 0. */
  bulkPublicProjects?: number;
  /** The clock's start: moving pipelines are placed relative to it. Default 2024-04-01T12:00:00Z (MANUAL_CLOCK_START). */
  now?: number;
  /** Size of job 1007's generated artifact file; default none (an ordinary small archive). */
  largeArtifactBytes?: number;
  /** Generated public forks of the first bulk projects (BULK FORKS above). Default none. */
  bulkForks?: BulkForksOptions;
  /** Generated finished CI for bulk and seeded projects (BULK CI above). Default none. */
  bulkJobs?: BulkJobsOptions;
  /** Further personal access tokens `user-1-token` … `user-N-token`, of demo, alice and bob in turn: N callers of distinct credentials. Default 0. */
  extraTokens?: number;
}

/** `count` forks, ids from BULK_FORK_FIRST_ID, of the first `parents` bulk projects in turn. */
export interface BulkForksOptions {
  count: number;
  parents: number;
}

/** Finished jobs: `perProject` for every bulk project, `seeded[id]` for seeded projects, `perPipeline` a pipeline (default 5). */
export interface BulkJobsOptions {
  perProject?: number;
  perPipeline?: number;
  seeded?: Readonly<Record<number, number>>;
}

/** Builds a fresh store holding the demo data described at the top of this file. */
export function seedStore(options: SeedOptions = {}): GitlabStore {
  const store = new GitlabStore();

  const users = [
    user(1, 'root', 'Administrator', '2022-01-01T00:00:00.000Z', { admin: true }),
    user(2, 'demo', 'Demo User', '2022-02-01T09:00:00.000Z'),
    user(3, 'alice', 'Alice Liddell', '2022-02-02T09:00:00.000Z'),
    user(4, 'bob', 'Bob Builder', '2022-02-03T09:00:00.000Z'),
    user(5, 'carol', 'Carol Danvers', '2022-02-04T09:00:00.000Z', { state: 'blocked' }),
  ];
  for (const u of users) {
    store.addUser(u);
    store.addNamespace({ id: u.id, name: u.name, path: u.username, kind: 'user', parentId: null, ownerId: u.id, avatarUrl: null });
  }
  store.tokens.set('admin-token', { token: 'admin-token', userId: 1, scopes: ['api', 'sudo'] });
  store.tokens.set('admin-nosudo-token', { token: 'admin-nosudo-token', userId: 1, scopes: ['api'] });
  store.tokens.set('demo-token', { token: 'demo-token', userId: 2, scopes: ['api'] });
  store.tokens.set('alice-token', { token: 'alice-token', userId: 3, scopes: ['api'] });
  store.tokens.set('bob-token', { token: 'bob-token', userId: 4, scopes: ['api'] });
  for (let i = 1; i <= (options.extraTokens ?? 0); i++) {
    store.tokens.set(`user-${i}-token`, { token: `user-${i}-token`, userId: 2 + ((i - 1) % 3), scopes: ['api'] });
  }

  store.addNamespace({ id: 6, name: 'Demo Group', path: 'demo-group', kind: 'group', parentId: null, ownerId: null, avatarUrl: null });
  store.addNamespace({
    id: 7,
    name: 'Platform',
    path: 'platform',
    kind: 'group',
    parentId: null,
    ownerId: null,
    avatarUrl: 'http://gitlab.sandbox.test/uploads/-/system/group/avatar/7/platform.png',
  });
  store.addNamespace({ id: 8, name: 'Tools', path: 'tools', kind: 'group', parentId: 7, ownerId: null, avatarUrl: null });
  store.addGroupMember(6, 2, ACCESS.owner);
  store.addGroupMember(6, 4, ACCESS.reporter);
  store.addGroupMember(7, 3, ACCESS.owner);
  store.addGroupMember(7, 4, ACCESS.maintainer);
  store.addGroupMember(7, 2, ACCESS.guest);
  store.addGroupMember(8, 2, ACCESS.developer);

  const seeds: ProjectSeed[] = [
    {
      id: 1,
      name: 'Core',
      path: 'core',
      namespaceId: 7,
      visibility: 'public',
      creatorId: 3,
      createdAt: '2023-01-10T09:00:00.000Z',
      updatedAt: '2024-03-01T10:00:00.000Z',
      lastActivityAt: '2024-03-02T11:22:33.000Z',
      description: 'The core platform service.',
      topics: ['ruby', 'platform'],
      languages: { Ruby: 66.69, JavaScript: 22.98, HTML: 7.91, CoffeeScript: 2.42 },
      licenseKey: 'mit',
      avatarUrl: 'http://gitlab.sandbox.test/uploads/-/system/project/avatar/1/core.png',
      commitCount: 1234,
      openIssuesCount: 12,
    },
    {
      id: 2,
      name: 'Infra',
      path: 'infra',
      namespaceId: 7,
      visibility: 'private',
      creatorId: 4,
      createdAt: '2023-02-14T10:30:00.000Z',
      updatedAt: '2023-12-01T08:00:00.000Z',
      lastActivityAt: '2023-12-05T08:00:00.000Z',
      description: 'Terraform for the platform.',
      topics: ['terraform'],
      features: { issues: false },
      languages: { HCL: 80.5, Shell: 19.5 },
    },
    {
      id: 3,
      name: 'Docs',
      path: 'docs',
      namespaceId: 7,
      visibility: 'internal',
      creatorId: 3,
      createdAt: '2023-01-05T08:15:00.000Z',
      updatedAt: '2024-01-20T12:00:00.000Z',
      lastActivityAt: '2024-02-10T12:00:00.000Z',
      description: 'Platform documentation site.',
      topics: ['docs'],
      features: { mergeRequests: false },
      languages: { HTML: 55, CSS: 30, JavaScript: 15 },
    },
    {
      id: 4,
      name: 'CLI',
      path: 'cli',
      namespaceId: 8,
      visibility: 'public',
      creatorId: 4,
      archived: true,
      createdAt: '2023-03-01T12:00:00.000Z',
      updatedAt: '2023-09-09T09:09:09.000Z',
      lastActivityAt: '2023-09-10T09:09:09.000Z',
      description: 'Command-line client (archived).',
      topics: ['go', 'cli'],
      languages: { Go: 100 },
    },
    {
      id: 5,
      name: 'Website',
      path: 'website',
      namespaceId: 6,
      visibility: 'public',
      creatorId: 2,
      createdAt: '2023-04-20T16:45:00.000Z',
      updatedAt: '2024-02-28T18:00:00.000Z',
      lastActivityAt: '2024-02-29T18:30:00.000Z',
      description: 'The demo group website.',
      topics: ['web'],
      languages: { TypeScript: 70.2, CSS: 20.3, HTML: 9.5 },
      licenseKey: 'apache-2.0',
    },
    {
      id: 6,
      name: 'API',
      path: 'api',
      namespaceId: 6,
      visibility: 'private',
      creatorId: 2,
      createdAt: '2023-04-22T11:11:00.000Z',
      updatedAt: '2024-01-05T10:10:10.000Z',
      lastActivityAt: '2024-01-06T10:10:10.000Z',
      description: 'Backend API of the demo group.',
      topics: ['python', 'api'],
      languages: { Python: 88.1, Dockerfile: 11.9 },
      licenseKey: 'mit',
      mergeMethod: 'ff',
    },
    {
      id: 7,
      name: 'Playground',
      path: 'playground',
      namespaceId: 2,
      visibility: 'public',
      creatorId: 2,
      createdAt: '2023-05-02T07:00:00.000Z',
      updatedAt: '2023-11-11T11:11:11.000Z',
      lastActivityAt: '2023-11-12T11:11:11.000Z',
      description: null,
      features: { mergeRequests: false },
      languages: { JavaScript: 100 },
    },
    {
      id: 8,
      name: 'dotfiles',
      path: 'dotfiles',
      namespaceId: 2,
      visibility: 'private',
      creatorId: 2,
      createdAt: '2023-03-15T19:20:00.000Z',
      updatedAt: '2023-04-01T00:00:00.000Z',
      lastActivityAt: '2023-04-01T00:00:00.000Z',
      description: 'My shell and editor settings.',
      languages: { Shell: 64.3, 'Vim Script': 35.7 },
      hasReadme: false,
      mergeMethod: 'rebase_merge',
    },
    {
      id: 9,
      name: 'Legacy App',
      path: 'legacy-app',
      namespaceId: 2,
      visibility: 'internal',
      creatorId: 2,
      archived: true,
      createdAt: '2022-11-30T23:59:59.000Z',
      updatedAt: '2023-01-01T00:00:00.000Z',
      lastActivityAt: '2023-01-02T00:00:00.000Z',
      description: 'An old PHP application.',
      topics: ['php', 'legacy'],
      languages: { PHP: 91.4, JavaScript: 8.6 },
      defaultBranch: 'master',
    },
    {
      id: 10,
      name: 'Secret Notes',
      path: 'secret-notes',
      namespaceId: 3,
      visibility: 'private',
      creatorId: 3,
      createdAt: '2023-06-01T06:30:00.000Z',
      updatedAt: '2024-03-03T03:03:03.000Z',
      lastActivityAt: '2024-03-04T04:04:04.000Z',
      description: "Alice's private notes.",
      languages: { Ruby: 100 },
    },
    {
      id: 11,
      name: 'Recipes',
      path: 'recipes',
      namespaceId: 3,
      visibility: 'public',
      creatorId: 3,
      createdAt: '2023-02-28T13:37:00.000Z',
      updatedAt: '2023-10-10T10:10:10.000Z',
      lastActivityAt: '2023-10-11T10:10:10.000Z',
      description: 'Recipes, with a Python scaler.',
      topics: ['cooking'],
      languages: { Python: 100 },
      licenseKey: 'cc0-1.0',
    },
    {
      id: 12,
      name: 'Rust Experiments',
      path: 'rust-experiments',
      namespaceId: 4,
      visibility: 'internal',
      creatorId: 4,
      createdAt: '2023-07-07T07:07:07.000Z',
      updatedAt: '2023-08-08T08:08:08.000Z',
      lastActivityAt: '2023-08-09T08:08:08.000Z',
      description: 'Trying out Rust.',
      topics: ['rust'],
      features: { issues: false, mergeRequests: false },
      languages: { Rust: 97.3, Shell: 2.7 },
    },
    {
      id: ADMIN_SCRIPTS_ID,
      name: 'Admin Scripts',
      path: 'admin-scripts',
      namespaceId: 1,
      visibility: 'private',
      creatorId: 1,
      createdAt: '2022-10-01T00:00:00.000Z',
      updatedAt: '2022-10-02T00:00:00.000Z',
      lastActivityAt: '2022-10-03T00:00:00.000Z',
      description: 'Maintenance scripts.',
      languages: { Shell: 100 },
    },
  ];
  const forkNamespaces = [6, 2, 3, 4, 1];
  for (let i = 1; i <= FORK_COUNT; i++) {
    const namespaceId = forkNamespaces[i % 5] ?? 2;
    const created = t('2023-08-01T10:00:00.000Z') + i * DAY;
    seeds.push({
      id: 13 + i,
      name: `Core Fork ${i}`,
      path: `core-fork-${i}`,
      namespaceId,
      visibility: i === 17 ? 'private' : i === 18 ? 'internal' : 'public',
      creatorId: store.namespace(namespaceId).ownerId ?? 2,
      createdAt: new Date(created).toISOString(),
      updatedAt: new Date(created + DAY / 2).toISOString(),
      lastActivityAt: new Date(created + ((i * 7) % 20) * DAY).toISOString(),
      description: 'The core platform service.',
      topics: ['ruby', 'platform'],
      forkedFromId: FORK_PARENT_ID,
      languages: { Ruby: 66.69, JavaScript: 22.98, HTML: 7.91, CoffeeScript: 2.42 },
      licenseKey: 'mit',
      openIssuesCount: 0,
    });
  }
  for (const seed of seeds) store.addProject(makeProject(seed));

  const core = store.projects.get(1);
  const api = store.projects.get(6);
  if (core) {
    core.sharedWithGroups.push({ groupId: 6, accessLevel: ACCESS.developer, expiresAt: null });
    core.customAttributes.push({ key: 'tier', value: 'gold' });
  }
  if (api) api.sharedWithGroups.push({ groupId: 7, accessLevel: ACCESS.reporter, expiresAt: '2030-12-31' });
  const docs = store.projects.get(3);
  if (docs) {
    docs.mirror = true;
    docs.importUrl = 'https://github.com/example/docs.git';
    docs.importStatus = 'finished';
  }
  store.addProjectMember(1, 5, ACCESS.reporter);
  store.addProjectMember(6, 3, ACCESS.developer);
  store.addProjectMember(7, 4, ACCESS.developer);

  for (const projectId of [1, 5, 11]) store.star(2, projectId);
  for (const projectId of [1, 7]) store.star(3, projectId);
  store.star(4, 1);

  seedCi(store, options.now ?? t('2024-04-01T12:00:00.000Z'), { largeArtifactBytes: options.largeArtifactBytes ?? null });

  const bulk = options.bulkPublicProjects ?? 0;
  if (bulk > 0) seedBulk(store, bulk);
  if (options.bulkForks) seedBulkForks(store, options.bulkForks, bulk);
  if (options.bulkJobs) {
    const { perProject = 0, perPipeline = 5, seeded = {} } = options.bulkJobs;
    if (!(Number.isInteger(perPipeline) && perPipeline >= 1)) throw new RangeError('bulkJobs.perPipeline must be a positive integer');
    // Seeded projects' jobs are run by alice (Owner of platform), bulk ones by root (Owner of bulk).
    const targets: [number, number, number][] = Object.entries(seeded).map(([id, count]) => [Number(id), count, 3]);
    if (perProject > 0) for (let n = 0; n < bulk; n++) targets.push([BULK_FIRST_ID + n, perProject, 1]);
    for (const [id] of targets) if (!store.projects.has(id)) throw new RangeError(`bulkJobs: no project ${id}`);
    seedBulkCi(store, options.now ?? t('2024-04-01T12:00:00.000Z'), targets, perPipeline);
  }
  return store;
}

/** Public forks in personal namespaces, many sharing each of a few bulk parents. */
function seedBulkForks(store: GitlabStore, { count, parents }: BulkForksOptions, bulk: number): void {
  if (!(Number.isInteger(parents) && parents >= 1 && parents <= bulk)) throw new RangeError('bulkForks.parents must be from 1 to bulkPublicProjects');
  const namespaces = [2, 3, 4, 1];
  const base = t('2021-01-01T00:00:00.000Z');
  for (let n = 1; n <= count; n++) {
    const namespaceId = namespaces[(n - 1) % namespaces.length] ?? 2;
    const at = base + n * 60_000;
    store.addProject({
      ...makeProject({
        id: BULK_FORK_FIRST_ID + n - 1,
        name: `Bulk Fork ${n}`,
        path: `bulk-fork-${n}`,
        namespaceId,
        visibility: 'public',
        creatorId: namespaceId,
        createdAt: '2021-01-01T00:00:00.000Z',
        updatedAt: '2021-01-01T00:00:00.000Z',
        lastActivityAt: '2021-01-01T00:00:00.000Z',
        description: null,
        commitCount: 1,
        openIssuesCount: 0,
        forkedFromId: BULK_FIRST_ID + ((n - 1) % parents),
      }),
      createdAt: at,
      updatedAt: at,
      lastActivityAt: at,
    });
  }
}

/** Public filler projects so lists can exceed GitLab's 10,000-item count limit. */
function seedBulk(store: GitlabStore, count: number): void {
  store.addNamespace({ id: 9, name: 'Bulk', path: 'bulk', kind: 'group', parentId: null, ownerId: null, avatarUrl: null });
  store.addGroupMember(9, 1, ACCESS.owner);
  const base = t('2020-01-01T00:00:00.000Z');
  for (let n = 1; n <= count; n++) {
    const at = base + n * 60_000;
    store.addProject({
      ...makeProject({
        id: BULK_FIRST_ID + n - 1,
        name: `Bulk Project ${n}`,
        path: `bulk-project-${n}`,
        namespaceId: 9,
        visibility: 'public',
        creatorId: 1,
        createdAt: '2020-01-01T00:00:00.000Z',
        updatedAt: '2020-01-01T00:00:00.000Z',
        lastActivityAt: '2020-01-01T00:00:00.000Z',
        description: null,
        commitCount: 1,
        openIssuesCount: 0,
      }),
      createdAt: at,
      updatedAt: at,
      lastActivityAt: at,
    });
  }
}
