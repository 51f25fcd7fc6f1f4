/**
 * Renders sandbox projects into GitLab's REST shapes, following the API
 * entities (lib/api/entities/{basic_project_details,project,project_with_access}.rb)
 * and the documented examples in reference/gitlab/examples:
 *
 * - simple (BasicProjectDetails): anonymous lists and `simple=true`; exactly the
 *   keys of GitLab's schema public_api/v4/project.json (additionalProperties false).
 * - full (Project / ProjectWithAccess): everything else; `permissions` only for a
 *   signed-in caller, `owner` only for projects in a personal namespace,
 *   `runners_token` and the CI settings only for Maintainer+ or admin.
 * - fork list items: the full form without owner, permissions and statistics
 *   (the spec), but with forked_from_project: GitLab's ProjectDetails entity
 *   exposes it on every full record (the abbreviated doc example leaves it out).
 */
import { createHash } from 'node:crypto';
import { canAdminProject, canReadProject, canReadStatistics, groupAccess, projectMemberAccess } from './access.js';
import { LICENSES, type GitlabStore, type SandboxProject, type SandboxUser } from './store.js';

/** Host of the sandbox's browser-facing URLs (web_url, clone URLs, avatars): stable, so tests can pin them. */
export const WEB_BASE = 'http://gitlab.sandbox.test';

/** GitLab's "global" notification level, reported for every membership. */
const NOTIFICATION_LEVEL = 3;

export type JsonObject = Record<string, unknown>;

/** What a rendering depends on besides the project. */
export interface RenderContext {
  store: GitlabStore;
  viewer: SandboxUser | null;
  /** The sandbox's own API root, e.g. http://127.0.0.1:1234/api/v4, for `_links`. */
  apiUrl: string;
  /** `license=true`: include the `license` object. */
  license: boolean;
  /** `statistics=true`: include `statistics` where the caller may read them. */
  statistics: boolean;
  /** `with_custom_attributes=true` from an admin. */
  customAttributes: boolean;
}

/** ISO 8601 UTC with milliseconds, as GitLab's API renders times: 2013-09-30T13:46:02.000Z. */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString();
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** UserBasic, plus created_at as the spec's owner object shows it. */
export function userBasicRecord(user: SandboxUser): JsonObject {
  const hash = createHash('md5').update(`${user.username}@sandbox.test`).digest('hex');
  return {
    id: user.id,
    username: user.username,
    name: user.name,
    state: user.state,
    locked: false,
    avatar_url: `https://www.gravatar.com/avatar/${hash}?s=80&d=identicon`,
    web_url: `${WEB_BASE}/${user.username}`,
  };
}

/** NamespaceBasic. */
export function namespaceRecord(store: GitlabStore, namespaceId: number): JsonObject {
  const ns = store.namespace(namespaceId);
  const fullPath = store.namespaceFullPath(namespaceId);
  return {
    id: ns.id,
    name: ns.name,
    path: ns.path,
    kind: ns.kind,
    full_path: fullPath,
    parent_id: ns.parentId,
    avatar_url: ns.avatarUrl,
    web_url: ns.kind === 'group' ? `${WEB_BASE}/groups/${fullPath}` : `${WEB_BASE}/${fullPath}`,
  };
}

function urls(store: GitlabStore, project: SandboxProject): { web: string; ssh: string; http: string; fullPath: string } {
  const fullPath = store.projectFullPath(project);
  const host = new URL(WEB_BASE).host;
  return { fullPath, web: `${WEB_BASE}/${fullPath}`, ssh: `git@${host}:${fullPath}.git`, http: `${WEB_BASE}/${fullPath}.git` };
}

/** import_url without credentials: GitLab exposes Project#safe_import_url, never the embedded password. */
function safeImportUrl(url: string | null): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url;
  }
}

function licenseUrl(store: GitlabStore, project: SandboxProject): string | null {
  if (!project.licenseKey) return null;
  return `${urls(store, project).web}/-/blob/${project.defaultBranch ?? 'main'}/LICENSE`;
}

function licenseRecord(project: SandboxProject): JsonObject | null {
  const license = project.licenseKey ? LICENSES[project.licenseKey] : undefined;
  if (!license) return null;
  return { key: license.key, name: license.name, nickname: license.nickname, html_url: license.htmlUrl, source_url: license.sourceUrl };
}

/** BasicProjectDetails: the simple form; exactly the keys of public_api/v4/project.json. */
export function simpleProjectRecord(project: SandboxProject, ctx: RenderContext): JsonObject {
  const { store } = ctx;
  const u = urls(store, project);
  const record: JsonObject = {
    id: project.id,
    description: project.description,
    name: project.name,
    name_with_namespace: store.projectFullName(project),
    path: project.path,
    path_with_namespace: u.fullPath,
    created_at: formatTime(project.createdAt),
    default_branch: project.defaultBranch,
    tag_list: [...project.topics],
    topics: [...project.topics],
    ssh_url_to_repo: u.ssh,
    http_url_to_repo: u.http,
    web_url: u.web,
    readme_url: project.hasReadme ? `${u.web}/-/blob/${project.defaultBranch ?? 'main'}/README.md` : null,
    avatar_url: project.avatarUrl,
    forks_count: store.forksOf(project.id).length,
    star_count: store.starCount(project.id),
    last_activity_at: formatTime(project.lastActivityAt),
    namespace: namespaceRecord(store, project.namespaceId),
  };
  if (ctx.customAttributes) record.custom_attributes = project.customAttributes.map((a) => ({ ...a }));
  return record;
}

/** `forked_from_project`: BasicProjectDetails of the parent, with license_url and license when license=true. */
function forkedFromRecord(parent: SandboxProject, ctx: RenderContext): JsonObject {
  const record = simpleProjectRecord(parent, { ...ctx, customAttributes: false });
  if (ctx.license) Object.assign(record, { license_url: licenseUrl(ctx.store, parent), license: licenseRecord(parent) });
  return record;
}

function accessRecord(level: number): JsonObject | null {
  return level > 0 ? { access_level: level, notification_level: NOTIFICATION_LEVEL } : null;
}

/** Which variant of the full form to render. */
export type FullForm = 'detail' | 'star';

/** The full project record (GitLab's Project / ProjectWithAccess entity). */
export function fullProjectRecord(project: SandboxProject, ctx: RenderContext, form: FullForm = 'detail'): JsonObject {
  const { store, viewer } = ctx;
  const u = urls(store, project);
  const namespace = store.namespace(project.namespaceId);
  const admin = canAdminProject(store, viewer, project);
  const f = project.features;
  const level = (on: boolean): string => (on ? 'enabled' : 'disabled');
  const simple = simpleProjectRecord(project, { ...ctx, customAttributes: false });
  const description = project.description ?? '';

  const record: JsonObject = {
    id: project.id,
    description: project.description,
    description_html: description ? `<p data-sourcepos="1:1-1:${description.length}" dir="auto">${escapeHtml(description)}</p>` : '',
    name: project.name,
    name_with_namespace: simple.name_with_namespace,
    path: project.path,
    path_with_namespace: u.fullPath,
    created_at: simple.created_at,
    updated_at: formatTime(project.updatedAt),
    default_branch: project.defaultBranch,
    tag_list: simple.tag_list,
    topics: simple.topics,
    ssh_url_to_repo: u.ssh,
    http_url_to_repo: u.http,
    web_url: u.web,
    readme_url: simple.readme_url,
    avatar_url: project.avatarUrl,
    forks_count: simple.forks_count,
    star_count: simple.star_count,
    last_activity_at: simple.last_activity_at,
    namespace: simple.namespace,
    container_registry_image_prefix: `registry.${new URL(WEB_BASE).host}/${u.fullPath}`,
    _links: {
      self: `${ctx.apiUrl}/projects/${project.id}`,
      ...(f.issues ? { issues: `${ctx.apiUrl}/projects/${project.id}/issues` } : {}),
      ...(f.mergeRequests ? { merge_requests: `${ctx.apiUrl}/projects/${project.id}/merge_requests` } : {}),
      repo_branches: `${ctx.apiUrl}/projects/${project.id}/repository/branches`,
      labels: `${ctx.apiUrl}/projects/${project.id}/labels`,
      events: `${ctx.apiUrl}/projects/${project.id}/events`,
      members: `${ctx.apiUrl}/projects/${project.id}/members`,
      cluster_agents: `${ctx.apiUrl}/projects/${project.id}/cluster_agents`,
    },
    packages_enabled: f.packages,
    empty_repo: false,
    archived: project.archived,
    visibility: project.visibility,
  };
  const owner = namespace.kind === 'user' && namespace.ownerId !== null ? store.users.get(namespace.ownerId) : undefined;
  if (owner && form !== 'star') record.owner = { ...userBasicRecord(owner), created_at: formatTime(owner.createdAt) };
  Object.assign(record, {
    resolve_outdated_diff_discussions: project.resolveOutdatedDiffDiscussions,
    repository_object_format: 'sha1',
    issues_enabled: f.issues,
    merge_requests_enabled: f.mergeRequests,
    wiki_enabled: f.wiki,
    jobs_enabled: f.jobs,
    snippets_enabled: f.snippets,
    container_registry_enabled: f.containerRegistry,
    service_desk_enabled: false,
    can_create_merge_request_in: viewer !== null && f.mergeRequests,
    issues_access_level: level(f.issues),
    repository_access_level: 'enabled',
    merge_requests_access_level: level(f.mergeRequests),
    forking_access_level: 'enabled',
    wiki_access_level: level(f.wiki),
    builds_access_level: level(f.jobs),
    snippets_access_level: level(f.snippets),
    pages_access_level: 'enabled',
    analytics_access_level: 'enabled',
    container_registry_access_level: level(f.containerRegistry),
    security_and_compliance_access_level: 'private',
    emails_disabled: false,
    emails_enabled: true,
    shared_runners_enabled: project.sharedRunnersEnabled,
    lfs_enabled: f.lfs,
    creator_id: project.creatorId,
  });
  if (project.forkedFromId !== null) record.mr_default_target_self = false;
  if (admin) Object.assign(record, { import_url: safeImportUrl(project.importUrl), import_type: project.importUrl ? 'git' : null });
  record.import_status = project.importStatus;
  if (admin) record.import_error = null;
  if (f.issues) record.open_issues_count = project.openIssuesCount;
  if (admin) {
    Object.assign(record, {
      ci_default_git_depth: 20,
      ci_delete_pipelines_in_seconds: null,
      ci_forward_deployment_enabled: true,
      ci_forward_deployment_rollback_allowed: true,
      ci_job_token_scope_enabled: false,
      ci_separated_caches: true,
      ci_allow_fork_pipelines_to_run_in_parent_project: true,
      build_git_strategy: 'fetch',
      keep_latest_artifact: true,
      restrict_user_defined_variables: false,
      ci_pipeline_variables_minimum_override_role: 'developer',
      runners_token: project.runnersToken,
      runner_token_expiration_interval: null,
      group_runners_enabled: true,
      auto_cancel_pending_pipelines: 'enabled',
      build_timeout: 3600,
      auto_devops_enabled: false,
      auto_devops_deploy_strategy: 'continuous',
      ci_push_repository_for_job_token_allowed: false,
    });
  }
  Object.assign(record, {
    ci_config_path: project.ciConfigPath,
    public_jobs: project.publicJobs,
    shared_with_groups: project.sharedWithGroups.map((link) => {
      const group = store.namespace(link.groupId);
      return {
        group_id: group.id,
        group_name: group.name,
        group_full_path: store.namespaceFullPath(group.id),
        group_access_level: link.accessLevel,
        expires_at: link.expiresAt,
      };
    }),
    only_allow_merge_if_pipeline_succeeds: project.onlyAllowMergeIfPipelineSucceeds,
    allow_merge_on_skipped_pipeline: false,
    request_access_enabled: project.requestAccessEnabled,
    only_allow_merge_if_all_discussions_are_resolved: project.onlyAllowMergeIfAllDiscussionsAreResolved,
    remove_source_branch_after_merge: project.removeSourceBranchAfterMerge,
    // GitLab's entity spells it `printing_merge_request_link_enabled` (the single-project doc example says "requests").
    printing_merge_request_link_enabled: project.printingMergeRequestLinkEnabled,
    merge_method: project.mergeMethod,
    squash_option: 'default_off',
    enforce_auth_checks_on_uploads: true,
    suggestion_commit_message: null,
    merge_commit_template: null,
    squash_commit_template: null,
    issue_branch_template: null,
  });
  if (ctx.statistics && form !== 'star' && canReadStatistics(store, viewer, project)) {
    const s = project.statistics;
    const storageSize =
      s.repositorySize + s.wikiSize + s.lfsObjectsSize + s.jobArtifactsSize + s.pipelineArtifactsSize + s.packagesSize + s.snippetsSize + s.uploadsSize;
    record.statistics = {
      commit_count: s.commitCount,
      storage_size: storageSize,
      repository_size: s.repositorySize,
      wiki_size: s.wikiSize,
      lfs_objects_size: s.lfsObjectsSize,
      job_artifacts_size: s.jobArtifactsSize,
      pipeline_artifacts_size: s.pipelineArtifactsSize,
      packages_size: s.packagesSize,
      snippets_size: s.snippetsSize,
      uploads_size: s.uploadsSize,
      container_registry_size: s.containerRegistrySize,
    };
  }
  Object.assign(record, {
    warn_about_potentially_unwanted_characters: true,
    autoclose_referenced_issues: true,
    max_artifacts_size: null,
    approvals_before_merge: project.approvalsBeforeMerge,
    external_authorization_classification_label: project.externalAuthorizationClassificationLabel,
  });
  // EE: `mirror` on every project of a licensed instance, the mirror settings only on mirrors.
  record.mirror = project.mirror;
  if (project.mirror) {
    Object.assign(record, {
      mirror_user_id: project.creatorId,
      mirror_trigger_builds: project.mirrorTriggerBuilds,
      only_mirror_protected_branches: false,
      mirror_overwrites_diverged_branches: false,
    });
  }
  // BasicProjectDetails exposes both `if: :license`: GET /projects/:id?license=true only, never a list.
  if (ctx.license) Object.assign(record, { license_url: licenseUrl(store, project), license: licenseRecord(project) });
  if (viewer?.admin) record.repository_storage = project.repositoryStorage;
  if (ctx.customAttributes) record.custom_attributes = project.customAttributes.map((a) => ({ ...a }));
  const parent = project.forkedFromId === null ? undefined : store.projects.get(project.forkedFromId);
  // The spec: forked_from_project appears only for a caller with a valid token; GitLab: who can see the parent.
  if (parent && viewer && canReadProject(store, viewer, parent)) record.forked_from_project = forkedFromRecord(parent, ctx);
  if (form !== 'star') {
    if (viewer) {
      record.permissions = {
        project_access: accessRecord(projectMemberAccess(store, viewer.id, project)),
        group_access: namespace.kind === 'group' ? accessRecord(groupAccess(store, viewer.id, namespace.id)) : null,
      };
    }
  }
  return record;
}
