/**
 * The Project node: every field of GitLab's project record, its embedded
 * objects, forks, members and languages, and the project query entry points.
 *
 * A record can come in several forms (full, simple, fork list, the
 * `forked_from_project` summary). A field the record lacks is read from the
 * full project through the request's loader, so one extra call serves every
 * missing field of that project, and fields the record holds cost nothing.
 */
import type { GraphQLResolveInfo } from 'graphql';
import { InputError } from '../../errors.js';
import type { KeyRequest, PageRequest, ProjectReadOptions } from '../../upstreams/gitlab/client.js';
import type { ProjectRecord } from '../../upstreams/gitlab/records.js';
import { builder } from '../builder.js';
import { UPSTREAM_CALL } from '../cost.js';
import type { Context } from '../context.js';
import { localIdOf, restIdOf } from '../global-id.js';
import { resolveConnection, resolveKeysetConnection } from '../pagination.js';
import { fieldsOnNodes, selects } from '../selection.js';
import { checked } from '../upstream-values.js';
import { Namespace } from './namespace.js';
import { LanguageShare, ProjectLicense, ProjectLinks, ProjectPermissions, ProjectStatistics, SharedGroup } from './project-details.js';
import { knownOrNull, MergeMethod, ProjectVisibility } from './project-enums.js';
import { projectFilterArgs, toRestFilters, type ProjectFilterArgs } from './project-filters.js';
import { User, UserConnection } from './user.js';
import { withoutUserInfo } from '../../scrub.js';

export const Project = builder.objectRef<ProjectRecord>('Project');

/** An import URL may carry `user:token@`: the gateway never hands that on. */
function withoutCredentials(url: string | null): string | null {
  return url === null ? null : withoutUserInfo(url);
}

/** A field of the project, from the record when it holds it, else from the full project. */
function projectValue<K extends keyof ProjectRecord>(
  record: ProjectRecord,
  key: K,
  ctx: Context,
  options: ProjectReadOptions = {},
): ProjectRecord[K] | null | Promise<ProjectRecord[K] | null> {
  if (key in record) return record[key] ?? null;
  const needsOption = options.statistics || options.license;
  if (!needsOption && ctx.gitlab.loaders.isComplete(record)) return null;
  return ctx.gitlab.loaders.project(record.id, options).then((full) => full?.[key] ?? null);
}

const VISIBILITIES = ['private', 'internal', 'public'] as const;
const MERGE_METHODS = ['merge', 'rebase_merge', 'ff'] as const;

builder.node(Project, {
  description: 'A GitLab project: a repository with its issues, merge requests, CI jobs and settings.',
  id: { resolve: (p) => p.id },
  loadOne: (id, ctx) => ctx.gitlab.loaders.project(id),
  fields: (t) => {
    // The helpers hand on what GitLab sent: strict-values.ts checks each value against its field's type.
    const text = (key: keyof ProjectRecord, description: string) =>
      t.string({
        nullable: true,
        description,
        resolve: (p, _args, ctx) => projectValue(p, key, ctx) as string | null | Promise<string | null>,
      });
    const flag = (key: keyof ProjectRecord, description: string) =>
      t.boolean({
        nullable: true,
        description,
        resolve: (p, _args, ctx) => projectValue(p, key, ctx) as boolean | null | Promise<boolean | null>,
      });
    const count = (key: keyof ProjectRecord, description: string) =>
      t.int({
        nullable: true,
        description,
        resolve: (p, _args, ctx) => projectValue(p, key, ctx) as number | null | Promise<number | null>,
      });
    const restId = (key: keyof ProjectRecord, description: string) =>
      t.field({
        type: 'SafeInt',
        nullable: true,
        description,
        resolve: (p, _args, ctx) => projectValue(p, key, ctx) as number | null | Promise<number | null>,
      });
    const time = (key: keyof ProjectRecord, description: string) =>
      t.field({
        type: 'DateTime',
        nullable: true,
        description,
        resolve: (p, _args, ctx) => projectValue(p, key, ctx) as string | null | Promise<string | null>,
      });
    return {
      restId: t.field({ type: 'SafeInt', description: 'Numeric id of the project in the GitLab REST API.', resolve: (p) => p.id }),
      name: t.string({ description: 'Name of the project.', resolve: (p) => p.name ?? '' }),
      nameWithNamespace: t.string({
        description: 'Name of the project with its namespace, e.g. `Group / Project`.',
        resolve: (p) => p.name_with_namespace ?? '',
      }),
      path: t.string({ description: 'Path of the project, the last segment of its full path.', resolve: (p) => p.path ?? '' }),
      pathWithNamespace: t.string({
        description: 'Full path of the project, e.g. `group/project`.',
        resolve: (p) => p.path_with_namespace ?? '',
      }),
      description: text('description', 'Description of the project.'),
      defaultBranch: text('default_branch', 'Default branch of the repository.'),
      visibility: t.field({
        type: ProjectVisibility,
        nullable: true,
        description: 'Visibility of the project.',
        resolve: async (p, _args, ctx) => knownOrNull(VISIBILITIES, (await projectValue(p, 'visibility', ctx)) ?? null),
      }),
      sshUrlToRepo: text('ssh_url_to_repo', 'URL to clone the repository over SSH.'),
      httpUrlToRepo: text('http_url_to_repo', 'URL to clone the repository over HTTP.'),
      webUrl: text('web_url', "URL of the project's page."),
      readmeUrl: text('readme_url', 'URL of the README of the default branch.'),
      avatarUrl: text('avatar_url', "URL of the project's avatar."),
      tagList: t.stringList({
        description: 'Tags of the project (called topics since GitLab 14).',
        resolve: (p) => p.tag_list ?? p.topics ?? [],
      }),
      topics: t.stringList({ description: 'Topics of the project.', resolve: (p) => p.topics ?? p.tag_list ?? [] }),
      createdAt: time('created_at', 'Time the project was created.'),
      updatedAt: time('updated_at', 'Time the project was last updated.'),
      lastActivityAt: time('last_activity_at', 'Time of the last activity in the project.'),
      forksCount: count('forks_count', 'Number of forks of the project.'),
      starCount: count('star_count', 'Number of users who starred the project.'),
      openIssuesCount: count('open_issues_count', 'Number of open issues.'),
      approvalsBeforeMerge: count('approvals_before_merge', 'Number of approvals a merge request needs.'),
      creatorId: restId('creator_id', 'Numeric id of the user who created the project.'),
      importStatus: text(
        'import_status',
        'Status of an import or fork: `none`, `scheduled`, `started`, `finished` or `failed`. A fork is complete when it reads `finished` or `none`.',
      ),
      importError: text('import_error', 'Error of a failed import.'),
      licenseUrl: t.string({
        complexity: UPSTREAM_CALL,
        nullable: true,
        description:
          'URL of the license file in the repository. GitLab sends it only to a single-project read with `license=true`, so from a list it costs one call per project.',
        resolve: (p, _args, ctx) => projectValue(p, 'license_url', ctx, { license: true }),
      }),
      repositoryStorage: text('repository_storage', 'Storage shard holding the repository (admins only).'),
      // No runnersToken: GitLab hands the runner registration token to every Maintainer who asks, and a
      // gateway in front of a frontend should not pass a credential that registers machines on to it.
      mergeMethod: t.field({
        type: MergeMethod,
        nullable: true,
        description: 'How merge requests are merged.',
        resolve: async (p, _args, ctx) => knownOrNull(MERGE_METHODS, (await projectValue(p, 'merge_method', ctx)) ?? null),
      }),
      archived: flag('archived', 'Indicates the project is archived (read-only).'),
      emptyRepo: flag('empty_repo', 'Indicates the repository has no commits yet.'),
      ciConfigPath: text(
        'ci_config_path',
        'Path of the CI configuration file; empty for the default `.gitlab-ci.yml`. Shown to callers who can read the code.',
      ),
      lfsEnabled: flag('lfs_enabled', 'Indicates Git LFS is enabled.'),
      packagesEnabled: flag('packages_enabled', 'Indicates the package registry is enabled.'),
      importUrl: t.string({
        nullable: true,
        description: 'URL the repository was imported or is mirrored from, without any credentials it holds (Maintainer role).',
        resolve: async (p, _args, ctx) => withoutCredentials(checked(await projectValue(p, 'import_url', ctx), 'string')),
      }),
      externalAuthorizationClassificationLabel: text(
        'external_authorization_classification_label',
        'Classification label for external authorization (paid tier).',
      ),
      mirror: flag('mirror', 'Indicates the project pulls from a mirror (paid tier).'),
      mirrorTriggerBuilds: flag('mirror_trigger_builds', 'Indicates mirror updates run pipelines (paid tier; mirrors only).'),
      mirrorUserId: restId('mirror_user_id', 'Numeric id of the user mirror updates are made as (paid tier; mirrors only).'),
      onlyMirrorProtectedBranches: flag('only_mirror_protected_branches', 'Indicates only protected branches are mirrored (paid tier; mirrors only).'),
      mirrorOverwritesDivergedBranches: flag(
        'mirror_overwrites_diverged_branches',
        'Indicates mirroring overwrites diverged branches (paid tier; mirrors only).',
      ),
      issuesEnabled: flag('issues_enabled', 'Indicates issues are enabled.'),
      mergeRequestsEnabled: flag('merge_requests_enabled', 'Indicates merge requests are enabled.'),
      jobsEnabled: flag('jobs_enabled', 'Indicates CI jobs are enabled.'),
      wikiEnabled: flag('wiki_enabled', 'Indicates the wiki is enabled.'),
      snippetsEnabled: flag('snippets_enabled', 'Indicates snippets are enabled.'),
      resolveOutdatedDiffDiscussions: flag('resolve_outdated_diff_discussions', 'Indicates discussions on outdated diff lines are resolved automatically.'),
      containerRegistryEnabled: flag('container_registry_enabled', 'Indicates the container registry is enabled.'),
      sharedRunnersEnabled: flag('shared_runners_enabled', "Indicates shared runners run the project's jobs."),
      publicJobs: flag('public_jobs', 'Indicates CI jobs are visible to non-members.'),
      onlyAllowMergeIfPipelineSucceeds: flag('only_allow_merge_if_pipeline_succeeds', 'Indicates merge requests merge only after a successful pipeline.'),
      onlyAllowMergeIfAllDiscussionsAreResolved: flag(
        'only_allow_merge_if_all_discussions_are_resolved',
        'Indicates merge requests merge only when all discussions are resolved.',
      ),
      printingMergeRequestLinkEnabled: t.boolean({
        nullable: true,
        description: 'Indicates a link to create or view a merge request is printed on push.',
        resolve: async (p, _args, ctx) => {
          const singular = await projectValue(p, 'printing_merge_request_link_enabled', ctx);
          return singular ?? p.printing_merge_requests_link_enabled ?? null;
        },
      }),
      requestAccessEnabled: flag('request_access_enabled', 'Indicates users may request access to the project.'),
      namespace: t.field({
        type: Namespace,
        nullable: true,
        description: 'Namespace the project lives in.',
        resolve: (p, _args, ctx) => projectValue(p, 'namespace', ctx),
      }),
      owner: t.field({
        type: User,
        nullable: true,
        description: 'User who owns the project; null for projects in a group namespace.',
        resolve: (p, _args, ctx) => projectValue(p, 'owner', ctx),
      }),
      permissions: t.field({
        type: ProjectPermissions,
        nullable: true,
        description: 'What the caller may do in the project; null for anonymous callers.',
        resolve: (p, _args, ctx) => projectValue(p, 'permissions', ctx),
      }),
      sharedWithGroups: t.field({
        type: [SharedGroup],
        nullable: true,
        description: 'Groups the project is shared with.',
        resolve: (p, _args, ctx) => projectValue(p, 'shared_with_groups', ctx),
      }),
      statistics: t.field({
        complexity: UPSTREAM_CALL,
        type: ProjectStatistics,
        nullable: true,
        description: 'Storage statistics of the project; null when GitLab does not show them to the caller.',
        resolve: (p, _args, ctx) => projectValue(p, 'statistics', ctx, { statistics: true }),
      }),
      license: t.field({
        complexity: UPSTREAM_CALL,
        type: ProjectLicense,
        nullable: true,
        description: 'License detected in the repository; null when there is none.',
        resolve: (p, _args, ctx) => projectValue(p, 'license', ctx, { license: true }),
      }),
      links: t.field({
        type: ProjectLinks,
        nullable: true,
        description: 'REST API URLs of the project and its sub-resources.',
        resolve: (p, _args, ctx) => projectValue(p, '_links', ctx),
      }),
      forkedFrom: t.field({
        complexity: UPSTREAM_CALL,
        type: Project,
        nullable: true,
        description:
          'Project this one was forked from; null when it is not a fork or the caller is anonymous. Fields GitLab embeds in the fork cost no call; any other field loads the parent once per request.',
        resolve: (p, _args, ctx) => {
          if (p.forked_from_project) return p.forked_from_project;
          const parent = ctx.gitlab.loaders.forkParentOf(p);
          return parent === undefined ? projectValue(p, 'forked_from_project', ctx) : ctx.gitlab.loaders.project(parent);
        },
      }),
      languages: t.field({
        complexity: UPSTREAM_CALL,
        type: [LanguageShare],
        description: 'Programming languages of the repository with their shares, largest first.',
        resolve: async (p, _args, ctx) => {
          const shares = await ctx.gitlab.loaders.languages(p.id);
          return Object.entries(shares ?? {})
            .map(([name, percentage]) => ({ name, percentage }))
            .sort((a, b) => b.percentage - a.percentage);
        },
      }),
      forks: t.connection(
        {
          type: Project,
          description: 'Forks of the project visible to the caller.',
          args: projectFilterArgs(t.arg, { programmingLanguage: false }),
          resolve: (p, args, ctx, info) =>
            listProjects(ctx, args, info, async (query, page) => {
              const result = await ctx.gitlab.client.listForks(p.id, query, page);
              ctx.gitlab.loaders.noteForks(result.items, p.id);
              return result;
            }),
        },
        ProjectConnection,
      ),
      users: t.connection(
        {
          type: User,
          description: 'Users who are members of the project.',
          args: { search: t.arg.string({ description: 'Returns users whose name or username matches.' }) },
          resolve: (p, args, ctx) =>
            resolveConnection(args, ctx.defaultPageSize, (page, perPage) =>
              ctx.gitlab.client.listProjectUsers(p.id, args.search ?? undefined, { page, perPage }),
            ),
        },
        UserConnection,
      ),
    };
  },
});

export const ProjectConnection = builder.connectionObject(
  { type: Project, name: 'ProjectConnection', description: 'A page of projects.' },
  { name: 'ProjectEdge', description: 'A project with its cursor.' },
);

/**
 * Project fields a list in GitLab's simple form (BasicProjectDetails) can
 * answer: the fields that form holds, and those that need only the id.
 */
const SIMPLE_FORM_FIELDS: ReadonlySet<string> = new Set([
  '__typename',
  'id',
  'restId',
  'name',
  'nameWithNamespace',
  'description',
  'path',
  'pathWithNamespace',
  'createdAt',
  'defaultBranch',
  'tagList',
  'topics',
  'sshUrlToRepo',
  'httpUrlToRepo',
  'webUrl',
  'readmeUrl',
  'avatarUrl',
  'starCount',
  'forksCount',
  'lastActivityAt',
  'namespace',
  'jobs',
  'pipelineJobs',
  'job',
  'hooks',
  'pushRule',
  'languages',
  'users',
  'forks',
  'latestArtifactsArchiveUrl',
  'latestArtifactFileUrl',
  'snapshotUrl',
]);

/**
 * Fetches a page of projects in the smallest form the selection allows:
 * `simple=true` when every selected field is in the simple form (a fifth of
 * the full record's bytes), `statistics=true` only when statistics are
 * selected. Full-form records, fork lists' included (current GitLab sends
 * forks as ProjectWithAccess), prime the loader; simple records do not, so a
 * field they lack still loads the whole project.
 */
async function listProjects(
  ctx: Context,
  args: ProjectFilterArgs & { first?: number | null; after?: string | null; last?: number | null; before?: string | null },
  info: GraphQLResolveInfo,
  fetch: (query: ReturnType<typeof toRestFilters>, page: PageRequest | KeyRequest) => ReturnType<Context['gitlab']['client']['listProjects']>,
) {
  const fields = fieldsOnNodes(info);
  const statistics = fields.has('statistics');
  const simple = [...fields].every((field) => SIMPLE_FORM_FIELDS.has(field));
  const query = { ...toRestFilters(args), statistics: statistics || undefined, simple: simple || undefined };
  const read = async (page: PageRequest | KeyRequest) => {
    const result = await fetch(query, page);
    if (!simple) ctx.gitlab.loaders.markComplete(result.items, { statistics });
    return result;
  };
  const byOffset = (page: number, perPage: number) => read({ page, perPage });
  // GitLab serves project lists by keyset in id order only: other orders page by offset, up to its offset limit.
  if (args.orderBy !== 'id') return resolveConnection(args, ctx.defaultPageSize, byOffset);
  return resolveKeysetConnection(
    args,
    ctx.defaultPageSize,
    (project) => project.id,
    (after, limit) => read({ after, limit }),
    byOffset,
  );
}

/** Whether `id` names a project by its full path (`group/project`, at most 255 characters): what costs a lookup before its numeric id is known. */
export function isProjectPath(id: string): boolean {
  return !id.startsWith('gid://') && id.length <= 255 && /^[^/\s]+(\/[^/\s]+)+$/.test(id);
}

/**
 * The project an argument names: a plain number, a full path (`group/project`)
 * or a Project global id. Errors name `argument`, the field the caller wrote.
 */
export function projectIdFromArg(id: string, argument = 'id'): string {
  if (restIdOf(id) !== null || isProjectPath(id)) return id;
  const decoded = id.startsWith('gid://') ? localIdOf(id, 'Project') : null;
  // A Project global id holds a number; anything else (`gid://duograph/Project/../../users`) never reaches GitLab.
  if (decoded === null || restIdOf(decoded) === null) {
    throw new InputError(`"${id.slice(0, 80)}" is not a project id, full path or Project global id.`, [argument]);
  }
  return decoded;
}

builder.queryFields((t) => ({
  project: t.field({
    complexity: UPSTREAM_CALL,
    type: Project,
    nullable: true,
    description: 'Finds a project by global id (or numeric REST id) or by full path; null when it does not exist or is not visible to the caller.',
    args: {
      id: t.arg.id({ description: 'Global id (e.g. `gid://duograph/Project/42`), numeric REST id or full path.' }),
      fullPath: t.arg.string({ description: 'Full path of the project, e.g. `group/project`.' }),
    },
    resolve: (_root, args, ctx, info) => {
      const given = [args.id, args.fullPath].filter((v) => v !== null && v !== undefined);
      if (given.length !== 1) throw new InputError('Give exactly one of "id" and "fullPath".', given.length ? ['fullPath'] : ['id']);
      // GitLab's full paths are at most 255 characters: a longer one is refused before any call.
      if (typeof args.fullPath === 'string' && args.fullPath.length > 255) throw new InputError('"fullPath" is longer than 255 characters.', ['fullPath']);
      const key = args.id !== null && args.id !== undefined ? projectIdFromArg(String(args.id)) : String(args.fullPath);
      return ctx.gitlab.loaders.project(key, {
        statistics: selects(info, ['statistics']),
        license: selects(info, ['license']) || selects(info, ['licenseUrl']),
      });
    },
  }),
  projects: t.connection(
    {
      type: Project,
      description: 'Lists projects visible to the caller: all public ones for an anonymous caller.',
      args: {
        ...projectFilterArgs(t.arg, { programmingLanguage: true }),
        wikiChecksumFailed: t.arg.boolean({ description: 'Limits to projects whose wiki checksum failed (premium tier).' }),
        repositoryChecksumFailed: t.arg.boolean({ description: 'Limits to projects whose repository checksum failed (premium tier).' }),
      },
      resolve: (_root, args, ctx, info) => listProjects(ctx, args, info, (query, page) => ctx.gitlab.client.listProjects(query, page)),
    },
    ProjectConnection,
  ),
  userProjects: t.connection(
    {
      type: Project,
      description: 'Lists the projects of a user that the caller can see.',
      args: {
        user: t.arg.string({ required: true, description: 'Numeric id or username of the user.' }),
        ...projectFilterArgs(t.arg, { programmingLanguage: true }),
      },
      resolve: (_root, args, ctx, info) => listProjects(ctx, args, info, (query, page) => ctx.gitlab.client.listUserProjects(args.user, query, page)),
    },
    ProjectConnection,
  ),
}));

// Federation: a supergraph names a project by its global id; it loads through the request's loader, as `node` does.
builder.asEntity(Project, {
  key: builder.selection<{ id: string }>('id'),
  resolveReference: (ref, ctx) => {
    const id = localIdOf(ref.id, 'Project');
    return id === null ? null : ctx.gitlab.loaders.project(id);
  },
});
