/** The small objects a project record embeds: permissions, statistics, license, links, shares, languages. */
import type {
  AccessRecord,
  LicenseRecord,
  PermissionsRecord,
  ProjectLinksRecord,
  SharedGroupRecord,
  StatisticsRecord,
} from '../../upstreams/gitlab/records.js';
import { builder } from '../builder.js';
import { AccessLevel, accessLevelOrNull } from './access-level.js';

export const ProjectAccess = builder.objectRef<AccessRecord>('ProjectAccess').implement({
  description: 'An access grant of the caller to a project, directly or through its group.',
  fields: (t) => ({
    accessLevel: t.int({ description: 'Numeric access level (10 guest, 20 reporter, 30 developer, 40 maintainer, 50 owner).', resolve: (a) => a.access_level }),
    role: t.field({
      type: AccessLevel,
      nullable: true,
      description: 'The access level as a role; null for a level this schema does not name.',
      resolve: (a) => accessLevelOrNull(a.access_level),
    }),
    notificationLevel: t.int({ nullable: true, description: 'Numeric notification level of the grant.', resolve: (a) => a.notification_level ?? null }),
  }),
});

export const ProjectPermissions = builder.objectRef<PermissionsRecord>('ProjectPermissions').implement({
  description: 'What the caller may do in a project.',
  fields: (t) => ({
    projectAccess: t.field({
      type: ProjectAccess,
      nullable: true,
      description: 'Access the caller has as a member of the project.',
      resolve: (p) => p.project_access ?? null,
    }),
    groupAccess: t.field({
      type: ProjectAccess,
      nullable: true,
      description: "Access the caller has through the project's group.",
      resolve: (p) => p.group_access ?? null,
    }),
  }),
});

export const SharedGroup = builder.objectRef<SharedGroupRecord>('SharedGroup').implement({
  description: 'A group the project is shared with.',
  fields: (t) => ({
    groupId: t.field({ type: 'SafeInt', description: 'Numeric id of the group.', resolve: (g) => g.group_id }),
    groupName: t.string({ description: 'Name of the group.', resolve: (g) => g.group_name }),
    groupFullPath: t.string({ description: 'Full path of the group.', resolve: (g) => g.group_full_path }),
    groupAccessLevel: t.int({ description: 'Numeric access level the group has to the project.', resolve: (g) => g.group_access_level }),
    groupRole: t.field({
      type: AccessLevel,
      nullable: true,
      description: "The group's access level as a role.",
      resolve: (g) => accessLevelOrNull(g.group_access_level),
    }),
    expiresAt: t.string({ nullable: true, description: 'Date (YYYY-MM-DD) the share expires; null when it does not.', resolve: (g) => g.expires_at ?? null }),
  }),
});

export const ProjectStatistics = builder.objectRef<StatisticsRecord>('ProjectStatistics').implement({
  description: 'Storage statistics of a project; sizes in bytes, as floats because they outgrow 32-bit integers.',
  fields: (t) => ({
    commitCount: t.int({ description: 'Number of commits in the repository.', resolve: (s) => s.commit_count }),
    storageSize: t.field({ type: 'SafeInt', description: 'Total storage used by the project.', resolve: (s) => s.storage_size }),
    repositorySize: t.field({ type: 'SafeInt', description: 'Size of the Git repository.', resolve: (s) => s.repository_size }),
    lfsObjectsSize: t.field({ type: 'SafeInt', description: 'Size of the LFS objects.', resolve: (s) => s.lfs_objects_size }),
    jobArtifactsSize: t.field({ type: 'SafeInt', description: 'Size of the CI job artifacts.', resolve: (s) => s.job_artifacts_size }),
    wikiSize: t.field({ type: 'SafeInt', nullable: true, description: 'Size of the wiki repository.', resolve: (s) => s.wiki_size ?? null }),
    packagesSize: t.field({ type: 'SafeInt', nullable: true, description: 'Size of the packages.', resolve: (s) => s.packages_size ?? null }),
    snippetsSize: t.field({ type: 'SafeInt', nullable: true, description: 'Size of the snippets.', resolve: (s) => s.snippets_size ?? null }),
    uploadsSize: t.field({ type: 'SafeInt', nullable: true, description: 'Size of the uploads.', resolve: (s) => s.uploads_size ?? null }),
  }),
});

export const ProjectLicense = builder.objectRef<LicenseRecord>('ProjectLicense').implement({
  description: "The license GitLab detected in a project's repository.",
  fields: (t) => ({
    key: t.string({ description: 'Key of the license, e.g. `mit`.', resolve: (l) => l.key }),
    name: t.string({ description: 'Full name of the license.', resolve: (l) => l.name }),
    nickname: t.string({ nullable: true, description: 'Short name of the license, when it has one.', resolve: (l) => l.nickname ?? null }),
    htmlUrl: t.string({ nullable: true, description: 'URL of a page describing the license.', resolve: (l) => l.html_url ?? null }),
    sourceUrl: t.string({ nullable: true, description: "URL of the license's text.", resolve: (l) => l.source_url ?? null }),
  }),
});

export const ProjectLinks = builder.objectRef<ProjectLinksRecord>('ProjectLinks').implement({
  description: 'REST API URLs of a project and its sub-resources.',
  fields: (t) => ({
    self: t.string({ description: 'REST URL of the project.', resolve: (l) => l.self }),
    issues: t.string({ nullable: true, description: "REST URL of the project's issues; null when issues are disabled.", resolve: (l) => l.issues ?? null }),
    mergeRequests: t.string({
      nullable: true,
      description: "REST URL of the project's merge requests; null when they are disabled.",
      resolve: (l) => l.merge_requests ?? null,
    }),
    repoBranches: t.string({ description: "REST URL of the project's branches.", resolve: (l) => l.repo_branches }),
    labels: t.string({ description: "REST URL of the project's labels.", resolve: (l) => l.labels }),
    events: t.string({ description: "REST URL of the project's events.", resolve: (l) => l.events }),
    members: t.string({ description: "REST URL of the project's members.", resolve: (l) => l.members }),
  }),
});

export interface LanguageShareShape {
  name: string;
  percentage: number;
}

export const LanguageShare = builder.objectRef<LanguageShareShape>('LanguageShare').implement({
  description: "The share of a programming language in a project's repository.",
  fields: (t) => ({
    name: t.exposeString('name', { description: 'Name of the language.' }),
    percentage: t.exposeFloat('percentage', { description: 'Share of the language in percent.' }),
  }),
});
