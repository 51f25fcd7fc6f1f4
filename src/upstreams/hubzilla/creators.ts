/**
 * Who uploaded each file, remembered across requests for one credential.
 * The file list leaves `creator` out and only filemeta has it, one call per
 * file; the hub never changes a file's creator (a new upload is a new hash),
 * so a creator read once stays true. Keyed by a digest of the credential and
 * the channel: no caller is ever answered from another's reads. Bounded,
 * oldest entry out first.
 */
import { createHash } from 'node:crypto';

/** Entries kept: about 12 MB at most (an 86-character hash per entry and its key). */
const MAX_ENTRIES = 50_000;

const creators = new Map<string, string>();

/** The cache scope of a credential and channel: a digest, so no credential is kept in memory here. */
export function creatorScope(authorization: string, channel: string | null): string {
  return createHash('sha256')
    .update(authorization)
    .update('\n')
    .update(channel ?? '')
    .digest('base64url');
}

/** The creator remembered for a file, if any. */
export function knownCreator(scope: string, hash: string): string | undefined {
  return creators.get(`${scope} ${hash}`);
}

/** Remembers a file's creator. */
export function rememberCreator(scope: string, hash: string, creator: string): void {
  const key = `${scope} ${hash}`;
  creators.delete(key);
  creators.set(key, creator);
  if (creators.size > MAX_ENTRIES) {
    const oldest = creators.keys().next().value;
    if (oldest !== undefined) creators.delete(oldest);
  }
}
