/** Enums of the project record and the project list filters, mapped to GitLab's lowercase values. */
import { builder } from '../builder.js';

export const ProjectVisibility = builder.enumType('ProjectVisibility', {
  description: 'Who can see a project.',
  values: {
    PRIVATE: { value: 'private', description: 'Access must be granted explicitly per user.' },
    INTERNAL: { value: 'internal', description: 'Any signed-in user can see and clone the project.' },
    PUBLIC: { value: 'public', description: 'Accessible without authentication.' },
  } as const,
});

export const MergeMethod = builder.enumType('MergeMethod', {
  description: 'How merge requests of a project are merged.',
  values: {
    MERGE: { value: 'merge', description: 'A merge commit is created for every merge; merging is allowed when there are no conflicts.' },
    REBASE_MERGE: {
      value: 'rebase_merge',
      description: 'A merge commit is created for every merge, but merging is allowed only if a fast-forward is possible.',
    },
    FF: { value: 'ff', description: 'No merge commits; merging is allowed only if the branch can be fast-forwarded.' },
  } as const,
});

export const ProjectOrderBy = builder.enumType('ProjectOrderBy', {
  description: 'The attribute a project list is ordered by.',
  values: {
    ID: { value: 'id', description: 'Order by project id.' },
    NAME: { value: 'name', description: 'Order by project name.' },
    PATH: { value: 'path', description: 'Order by project path.' },
    CREATED_AT: { value: 'created_at', description: 'Order by creation time (the default).' },
    UPDATED_AT: { value: 'updated_at', description: 'Order by last update time.' },
    LAST_ACTIVITY_AT: { value: 'last_activity_at', description: 'Order by last activity time.' },
  } as const,
});

export const SortDirection = builder.enumType('SortDirection', {
  description: 'Direction of an ordering.',
  values: {
    ASC: { value: 'asc', description: 'Ascending.' },
    DESC: { value: 'desc', description: 'Descending (the default).' },
  } as const,
});

/** The enum value when GitLab sent a known one; null for values a newer server may add. */
export function knownOrNull<T extends string>(values: readonly T[], value: string | null | undefined): T | null {
  return value !== null && value !== undefined && (values as readonly string[]).includes(value) ? (value as T) : null;
}
