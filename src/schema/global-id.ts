/**
 * Global ids as DESIGN.md fixes them: `gid://duograph/<Type>/<id>`, where a
 * job's id is `<projectId>/<jobId>` because every job path needs its project.
 */
import { InputError, UpstreamError } from '../errors.js';

const PREFIX = 'gid://duograph/';
/** What a missing or malformed upstream id turns into as text: never an id. */
const NOT_AN_ID = /^$|(^|\/)(undefined|null|NaN|\[object Object\])(\/|$)/;

/** The global id of a record; a record without a usable id (a malformed upstream item) is the upstream's error, never a node. */
export function encodeGlobalId(typename: string, id: string | number | bigint): string {
  const local = String(id);
  // Numbers (most ids) need only be finite; text is checked for what a missing part prints as.
  if (typeof id === 'number' ? !Number.isFinite(id) : NOT_AN_ID.test(local)) {
    throw new UpstreamError(`The upstream sent a ${typename} without a usable id.`, 'UPSTREAM_ERROR', {
      name: 'upstream',
      status: 200,
      method: 'GET',
      path: '',
    });
  }
  return `${PREFIX}${typename}/${local}`;
}

/** The graph's Node types (node-ids.ts records them as the schema is built): an id of any other type is refused, with a code. */
const nodeTypes = new Set<string>();

/** Records the names of the graph's Node types. */
export function recordNodeTypes(names: Iterable<string>): void {
  for (const name of names) nodeTypes.add(name);
}

/** Splits a global id; throws InputError for anything that is not one, or one of a type the graph does not have. */
export function decodeGlobalId(globalId: string): { typename: string; id: string } {
  const match = /^gid:\/\/duograph\/([A-Za-z][A-Za-z0-9]*)\/(.+)$/.exec(globalId);
  if (!match || globalId.length > 512) throw new InputError(`"${globalId.slice(0, 80)}" is not a duograph global id.`, ['id']);
  const typename = match[1] ?? '';
  if (nodeTypes.size > 0 && !nodeTypes.has(typename)) {
    throw new InputError(`"${globalId.slice(0, 80)}" names type ${typename}, which is not a type of node in this graph.`, ['id']);
  }
  return { typename, id: match[2] ?? '' };
}

/**
 * The local id inside a global id of `typename`; null for a malformed id or
 * one of another type (a federated reference the gateway could not know is wrong).
 */
export function localIdOf(globalId: string, typename: string): string | null {
  try {
    const decoded = decodeGlobalId(globalId);
    return decoded.typename === typename ? decoded.id : null;
  } catch (error) {
    if (error instanceof InputError) return null;
    throw error;
  }
}

/**
 * A REST id written in decimal, as a number; null for anything else, and for a
 * number past 2^53-1 that JavaScript could not hold exactly. GitLab's job ids
 * are past 2^31, so nothing here assumes 32 bits.
 */
export function restIdOf(text: string): number | null {
  if (!/^\d{1,16}$/.test(text)) return null;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : null;
}

/** `"<projectId>/<id>"`, the local id of jobs and hooks, as two REST ids; null for anything else. */
export function restIdPairOf(text: string): [number, number] | null {
  const slash = text.indexOf('/');
  if (slash < 0) return null;
  const first = restIdOf(text.slice(0, slash));
  const second = restIdOf(text.slice(slash + 1));
  return first === null || second === null ? null : [first, second];
}
