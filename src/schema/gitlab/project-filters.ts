/** The project list filters as typed GraphQL arguments, and their REST form. */
import type { ProjectListFilters } from '../../upstreams/gitlab/client.js';
import { builder } from '../builder.js';
import { AccessLevel } from './access-level.js';
import { ProjectOrderBy, ProjectVisibility, SortDirection } from './project-enums.js';

export const CustomAttributeFilter = builder.inputType('CustomAttributeFilter', {
  description: 'A custom attribute a project must have (admins only).',
  fields: (t) => ({
    key: t.string({ required: true, description: 'Key of the custom attribute.' }),
    value: t.string({ required: true, description: 'Value the attribute must have.' }),
  }),
});

type ArgBuilder = Parameters<Parameters<typeof builder.queryField>[1]>[0]['arg'];

/** The shared filters of GET /projects, /users/:id/projects and /projects/:id/forks. */
export function projectFilterArgs(arg: ArgBuilder, options: { programmingLanguage: boolean }) {
  const base = {
    archived: arg.boolean({ description: 'Limits by archived status.' }),
    visibility: arg({ type: ProjectVisibility, description: 'Limits by visibility.' }),
    orderBy: arg({
      type: ProjectOrderBy,
      description: 'Orders projects by this attribute (default CREATED_AT). ID pages forward by keyset: past the 50,000 items GitLab pages by offset.',
    }),
    sort: arg({ type: SortDirection, description: 'Direction of the ordering (default DESC).' }),
    search: arg.string({ description: 'Returns projects matching this search text.' }),
    owned: arg.boolean({ description: 'Limits to projects explicitly owned by the caller.' }),
    membership: arg.boolean({ description: 'Limits to projects the caller is a member of.' }),
    starred: arg.boolean({ description: 'Limits to projects the caller starred.' }),
    withIssuesEnabled: arg.boolean({ description: 'Limits to projects with issues enabled.' }),
    withMergeRequestsEnabled: arg.boolean({ description: 'Limits to projects with merge requests enabled.' }),
    minAccessLevel: arg({ type: AccessLevel, description: 'Limits to projects where the caller has at least this access level.' }),
    customAttributes: arg({ type: [CustomAttributeFilter], description: 'Limits to projects with these custom attributes (admins only).' }),
  };
  return options.programmingLanguage
    ? { ...base, withProgrammingLanguage: arg.string({ description: 'Limits to projects using this programming language.' }) }
    : base;
}

export interface ProjectFilterArgs {
  archived?: boolean | null;
  visibility?: string | null;
  orderBy?: string | null;
  sort?: string | null;
  search?: string | null;
  owned?: boolean | null;
  membership?: boolean | null;
  starred?: boolean | null;
  withIssuesEnabled?: boolean | null;
  withMergeRequestsEnabled?: boolean | null;
  withProgrammingLanguage?: string | null;
  minAccessLevel?: number | null;
  customAttributes?: readonly { key: string; value: string }[] | null;
  wikiChecksumFailed?: boolean | null;
  repositoryChecksumFailed?: boolean | null;
}

/** The REST query for the arguments; arguments not given are not sent. */
export function toRestFilters(args: ProjectFilterArgs): ProjectListFilters {
  const filters: ProjectListFilters = {
    archived: args.archived ?? undefined,
    visibility: args.visibility ?? undefined,
    order_by: args.orderBy ?? undefined,
    sort: args.sort ?? undefined,
    search: args.search ?? undefined,
    owned: args.owned ?? undefined,
    membership: args.membership ?? undefined,
    starred: args.starred ?? undefined,
    with_issues_enabled: args.withIssuesEnabled ?? undefined,
    with_merge_requests_enabled: args.withMergeRequestsEnabled ?? undefined,
    with_programming_language: args.withProgrammingLanguage ?? undefined,
    min_access_level: args.minAccessLevel ?? undefined,
    wiki_checksum_failed: args.wikiChecksumFailed ?? undefined,
    repository_checksum_failed: args.repositoryChecksumFailed ?? undefined,
  };
  if (args.customAttributes?.length) {
    filters.custom_attributes = Object.fromEntries(args.customAttributes.map((a) => [a.key, a.value]));
  }
  return filters;
}
