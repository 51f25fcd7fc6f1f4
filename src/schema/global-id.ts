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
