/**
 * The shared project-list filters of GET /projects, /users/:user_id/projects
 * and /projects/:id/forks (ProjectsFinder plus the API's find_projects), and
 * their deterministic ordering.
 */
import { accessLevel, canReadProject, ownsProject } from './access.js';
import type { Params } from './params.js';
import { ACCESS, type GitlabStore, type SandboxProject, type SandboxUser, type Visibility } from './store.js';

export const ORDER_BY = ['id', 'name', 'path', 'created_at', 'updated_at', 'last_activity_at'] as const;
export type OrderBy = (typeof ORDER_BY)[number];
const VISIBILITIES: readonly Visibility[] = ['private', 'internal', 'public'];
// Gitlab::Access.all_values: minimal access (5), guest, planner, reporter, developer, maintainer, owner.
const ACCESS_VALUES = [ACCESS.minimal, ACCESS.guest, ACCESS.planner, ACCESS.reporter, ACCESS.developer, ACCESS.maintainer, ACCESS.owner];

export interface ProjectFilters {
  archived?: boolean;
  visibility?: Visibility;
  orderBy: OrderBy;
  sort: 'asc' | 'desc';
  search?: string;
  searchNamespaces: boolean;
  simple: boolean;
  owned: boolean;
  membership: boolean;
  starred: boolean;
  statistics: boolean;
  withCustomAttributes: boolean;
  withIssuesEnabled: boolean;
  withMergeRequestsEnabled: boolean;
  withProgrammingLanguage?: string;
  minAccessLevel?: number;
  idAfter?: number;
  idBefore?: number;
  customAttributes: [string, string][];
}

/** Reads the shared filters; `withProgrammingLanguage: false` for the fork list, which does not take it. */
export function readProjectFilters(params: Params, options: { programmingLanguage: boolean }): ProjectFilters {
  const customAttributes: [string, string][] = [];
  for (const key of Object.keys(params.query)) {
    const match = /^custom_attributes\[(.+)\]$/.exec(key);
    const value = params.string(key);
    if (match?.[1] !== undefined && value !== undefined) customAttributes.push([match[1], value]);
  }
  return {
    archived: params.boolean('archived'),
    visibility: params.oneOf('visibility', VISIBILITIES),
    orderBy: params.oneOf('order_by', ORDER_BY) ?? 'created_at',
    sort: params.oneOf('sort', ['asc', 'desc'] as const) ?? 'desc',
    search: params.string('search'),
    searchNamespaces: params.boolean('search_namespaces') ?? false,
    simple: params.boolean('simple') ?? false,
    owned: params.boolean('owned') ?? false,
    membership: params.boolean('membership') ?? false,
    starred: params.boolean('starred') ?? false,
    statistics: params.boolean('statistics') ?? false,
    withCustomAttributes: params.boolean('with_custom_attributes') ?? false,
    withIssuesEnabled: params.boolean('with_issues_enabled') ?? false,
    withMergeRequestsEnabled: params.boolean('with_merge_requests_enabled') ?? false,
    withProgrammingLanguage: options.programmingLanguage ? params.string('with_programming_language') : undefined,
    minAccessLevel: params.integerOneOf('min_access_level', ACCESS_VALUES),
    idAfter: params.integer('id_after'),
    idBefore: params.integer('id_before'),
    customAttributes,
  };
}

function sortKey(project: SandboxProject, orderBy: OrderBy): number | string {
  switch (orderBy) {
    case 'id':
      return project.id;
    case 'name':
      return project.name.toLowerCase();
    case 'path':
      return project.path.toLowerCase();
    case 'created_at':
      return project.createdAt;
    case 'updated_at':
      return project.updatedAt;
    case 'last_activity_at':
      return project.lastActivityAt;
  }
}

/**
 * The candidates the caller may see that pass every filter, ordered by
 * `order_by`/`sort` with ties broken by id in the same direction.
 * Anonymous callers: owned, membership and min_access_level are ignored (as
 * ProjectsFinder does without a user) and starred matches nothing.
 */
export function selectProjects(
  store: GitlabStore,
  viewer: SandboxUser | null,
  candidates: Iterable<SandboxProject>,
  filters: ProjectFilters,
): SandboxProject[] {
  const search = filters.search?.toLowerCase();
  const language = filters.withProgrammingLanguage?.toLowerCase();
  const starred = filters.starred ? (viewer ? (store.stars.get(viewer.id) ?? new Set<number>()) : new Set<number>()) : null;
  const customAttributes = viewer?.admin ? filters.customAttributes : [];
  const selected: SandboxProject[] = [];
  for (const project of candidates) {
    if (filters.archived !== undefined && project.archived !== filters.archived) continue;
    if (filters.visibility && project.visibility !== filters.visibility) continue;
    if (filters.idAfter !== undefined && project.id <= filters.idAfter) continue;
    if (filters.idBefore !== undefined && project.id >= filters.idBefore) continue;
    if (filters.withIssuesEnabled && !project.features.issues) continue;
    if (filters.withMergeRequestsEnabled && !project.features.mergeRequests) continue;
    if (starred && !starred.has(project.id)) continue;
    if (language !== undefined && !Object.keys(project.languages).some((name) => name.toLowerCase() === language)) continue;
    if (search !== undefined) {
      const haystack = [project.name, project.path, project.description ?? ''];
      if (filters.searchNamespaces) haystack.push(store.projectFullPath(project), store.projectFullName(project));
      if (!haystack.some((text) => text.toLowerCase().includes(search))) continue;
    }
    if (customAttributes.length > 0 && !customAttributes.every(([k, v]) => project.customAttributes.some((a) => a.key === k && a.value === v))) continue;
    if (!canReadProject(store, viewer, project)) continue;
    if (viewer) {
      if (filters.owned && !ownsProject(store, viewer, project)) continue;
      if (filters.membership || filters.minAccessLevel !== undefined) {
        const level = accessLevel(store, viewer, project);
        if (filters.membership && level < ACCESS.guest) continue;
        if (filters.minAccessLevel !== undefined && level < filters.minAccessLevel) continue;
      }
    }
    selected.push(project);
  }
  const direction = filters.sort === 'asc' ? 1 : -1;
  return selected.sort((a, b) => {
    const ka = sortKey(a, filters.orderBy);
    const kb = sortKey(b, filters.orderBy);
    if (ka < kb) return -direction;
    if (ka > kb) return direction;
    return (a.id - b.id) * direction;
  });
}
