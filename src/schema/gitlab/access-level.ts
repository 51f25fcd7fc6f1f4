/** GitLab's numeric access levels as a GraphQL enum. */
import { builder } from '../builder.js';

const LEVELS = {
  NO_ACCESS: { value: 0, description: 'No access.' },
  MINIMAL_ACCESS: { value: 5, description: 'Minimal access: sees the group, nothing in it.' },
  GUEST: { value: 10, description: 'Guest access.' },
  PLANNER: { value: 15, description: 'Planner access.' },
  REPORTER: { value: 20, description: 'Reporter access.' },
  DEVELOPER: { value: 30, description: 'Developer access.' },
  MAINTAINER: { value: 40, description: 'Maintainer access.' },
  OWNER: { value: 50, description: 'Owner access.' },
} as const;

const KNOWN = new Set<number>(Object.values(LEVELS).map((l) => l.value));

export const AccessLevel = builder.enumType('AccessLevel', {
  description: 'Access level of a user or group to a project, as GitLab numbers it (10 guest to 50 owner).',
  values: LEVELS,
});

/** The enum value for a level, or null for one this schema does not name. */
export function accessLevelOrNull(level: number | null | undefined): (typeof LEVELS)[keyof typeof LEVELS]['value'] | null {
  return level !== null && level !== undefined && KNOWN.has(level) ? (level as (typeof LEVELS)[keyof typeof LEVELS]['value']) : null;
}
