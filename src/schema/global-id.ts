/**
 * Global ids as DESIGN.md fixes them: `gid://duograph/<Type>/<id>`, where a
 * job's id is `<projectId>/<jobId>` because every job path needs its project.
 */
import { InputError } from '../errors.js';

const PREFIX = 'gid://duograph/';

export function encodeGlobalId(typename: string, id: string | number | bigint): string {
  return `${PREFIX}${typename}/${String(id)}`;
}

/** Splits a global id; throws InputError for anything that is not one. */
export function decodeGlobalId(globalId: string): { typename: string; id: string } {
  const match = /^gid:\/\/duograph\/([A-Za-z][A-Za-z0-9]*)\/(.+)$/.exec(globalId);
  if (!match || globalId.length > 512) throw new InputError(`"${globalId.slice(0, 80)}" is not a duograph global id.`, ['id']);
  return { typename: match[1] ?? '', id: match[2] ?? '' };
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
