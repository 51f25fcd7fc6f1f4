/**
 * What the answer cache may keep of each upstream GET, for how long, and what
 * drops it: a resource family per route, the tags a change drops it by, and
 * the secrets taken out before anything is stored. Pure functions of a
 * call's path and query: no state, no I/O.
 *
 * Families and their ages (docs/graph.md, "Caching"):
 * - GitLab `jobs` (project and pipeline job lists, one job, bridges) and
 *   `pipelines` (lists, one pipeline, its variables and test summary): the
 *   webhook age where the project's job and pipeline webhooks reach the
 *   gateway, else the plain age.
 * - Every other family: the plain age, since no event announces its changes.
 * - Never stored: `/user` (a credential check), `/version` (readiness), and
 *   Hubzilla's `verify`, `channel/export` and `abconfig`, which carry secrets.
 */
import { withoutUserInfo } from '../scrub.js';
import type { PathSegments } from './http.js';

/** Families whose answers a project's job and pipeline webhooks can drop, and so may live for the webhook age. */
export type WebhookKind = 'jobs' | 'pipelines';

export interface CachePolicy {
  /** The resource family: a metric label and the unit of a maximum age. */
  family: string;
  /** What drops the answer: a change announces the tags it touches (`invalidationTags`, `webhookTags`). */
  tags: string[];
  /** The project whose webhooks drop the answer, for the families that live longer with webhooks. */
  webhook?: { projectId: number; kind: WebhookKind };
  /** Takes out what must never be stored, given the body's text; returns the text to keep. */
  sanitize?: (text: string) => string;
}

/** Everything GitLab answers about one project is tagged with it, so a write to it drops all of it for every scope. */
function projectTag(segment: string | number): string {
  return `gitlab:project:${String(segment).toLowerCase()}`;
}

/** Project lists: every write to any project may change them (stars, names, visibility, new forks). */
const PROJECT_LISTS = 'gitlab:project-lists';
/** Every Hubzilla answer: a hub's writes are rare and touch streams, files and albums alike. */
const HUBZILLA_ALL = 'hubzilla:all';

/** The tags a project's job or pipeline webhook drops: its job and pipeline answers, and nothing else of it. */
export function webhookTags(projectId: number): string[] {
  return [`${projectTag(projectId)}:jobs`, `${projectTag(projectId)}:pipelines`];
}

function numeric(segment: string | number | undefined): number | undefined {
  const value = typeof segment === 'number' ? segment : /^\d{1,16}$/.test(segment ?? '') ? Number(segment) : Number.NaN;
  return Number.isSafeInteger(value) ? value : undefined;
}

/** The cache policy of a GitLab GET, or null for one never stored. */
export function gitlabPolicy(path: PathSegments): CachePolicy | null {
  const [root, id, sub, subId, leaf] = path;
  if (root === 'projects' && id === undefined) return { family: 'project_lists', tags: [PROJECT_LISTS], sanitize: withoutProjectSecrets };
  if (root === 'users' && path[2] === 'projects') return { family: 'project_lists', tags: [PROJECT_LISTS], sanitize: withoutProjectSecrets };
  if (root !== 'projects' || id === undefined) return null;
  const project = projectTag(id);
  const projectId = numeric(id);
  const ci = (kind: WebhookKind): CachePolicy => ({
    family: kind,
    tags: [project, `${project}:${kind}`],
    ...(projectId === undefined ? {} : { webhook: { projectId, kind } }),
  });
  switch (sub) {
    case undefined:
      return { family: 'projects', tags: [project], sanitize: withoutProjectSecrets };
    case 'forks':
      return { family: 'project_lists', tags: [project, PROJECT_LISTS], sanitize: withoutProjectSecrets };
    case 'jobs':
      // The log is streamed, never read through here; artifacts likewise.
      return leaf === undefined && path.length <= 4 ? ci('jobs') : null;
    case 'pipelines':
      if (subId !== undefined && (leaf === 'jobs' || leaf === 'bridges' || leaf === 'trigger_jobs')) return ci('jobs');
      return ci('pipelines');
    case 'hooks':
      return { family: 'hooks', tags: [project] };
    case 'push_rule':
      return { family: 'push_rules', tags: [project] };
    case 'users':
      return { family: 'project_users', tags: [project] };
    case 'languages':
      return { family: 'projects', tags: [project] };
    case 'repository':
      return { family: 'commits', tags: [project] };
    default:
      return null;
  }
}

/** Hubzilla routes whose answers hold secrets (password hashes, private keys, connection settings): never stored. */
const HUBZILLA_NEVER = new Set(['verify', 'channel/export', 'abconfig']);

/** The cache policy of a Hubzilla GET, or null for one never stored. */
export function hubzillaPolicy(path: PathSegments): CachePolicy | null {
  const route = path.slice(0, 2).join('/');
  if (HUBZILLA_NEVER.has(String(path[0])) || HUBZILLA_NEVER.has(route)) return null;
  const family = path[0] === 'channel' || path[0] === 'network' || path[0] === 'item' ? 'streams' : String(path[0]);
  return { family: /^[a-z_]{1,20}$/.test(family) ? family : 'other', tags: [HUBZILLA_ALL] };
}

/**
 * The tags a successful write drops, for every scope: everything of the
 * project it names (by the segment it was named with, and by the id and path
 * its answer gives, since reads may name it either way), and the project
 * lists. A Hubzilla write drops every Hubzilla answer.
 */
export function invalidationTags(upstream: string, path: PathSegments, answer: unknown): string[] {
  if (upstream !== 'gitlab') return [HUBZILLA_ALL];
  const tags = [PROJECT_LISTS];
  if (path[0] === 'projects' && path[1] !== undefined) tags.push(projectTag(path[1]));
  if (answer && typeof answer === 'object' && !Array.isArray(answer)) {
    const record = answer as Record<string, unknown>;
    if (typeof record.project_id === 'number') tags.push(projectTag(record.project_id));
    if (typeof record.path_with_namespace === 'string' && typeof record.id === 'number') {
      tags.push(projectTag(record.id), projectTag(record.path_with_namespace));
    }
  }
  return tags;
}

/** The project tag a project record read by id or path also answers to, so a write naming it the other way drops it too. */
export function projectAliases(text: string): string[] {
  // Only a single project record names itself; lists are tagged as lists.
  const id = /^\{"id":(\d{1,16}),/.exec(text)?.[1];
  const path = /"path_with_namespace":"((?:[^"\\]|\\.){1,400})"/.exec(text)?.[1];
  return id && path ? [projectTag(id), projectTag(JSON.parse(`"${path}"`) as string)] : [];
}

/**
 * A project record or list without what the gateway never exposes: the
 * runners registration token, and any user and password inside its import
 * URL. Parsed only when the text names one of them.
 */
export function withoutProjectSecrets(text: string): string {
  if (!text.includes('"runners_token"') && !/"import_url":"[^"]*@/.test(text)) return text;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  const clean = (record: unknown) => {
    if (!record || typeof record !== 'object') return;
    const project = record as Record<string, unknown>;
    delete project.runners_token;
    if (typeof project.import_url === 'string') project.import_url = withoutUserInfo(project.import_url);
  };
  if (Array.isArray(value)) value.forEach(clean);
  else clean(value);
  return JSON.stringify(value);
}
