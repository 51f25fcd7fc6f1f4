/**
 * Hubzilla's per-connection permissions, decoded. 8.8.7 keeps what a channel
 * grants a connection, and what the connection grants back, in abconfig rows
 * (`cat` `my_perms` / `their_perms`, `k` the permission, `v` `0`/`1`); hubs
 * from before the move kept them in the abook row as bit fields
 * (`abook_my_perms`, `abook_their_perms`, the PERMS_* constants), which 8.8.7
 * leaves at 0. Both are read; the abconfig rows win.
 */
import type { ConnectionSettingRecord } from './records.js';

/** The 17 permissions perm_allowed reports on 8.8.7, in its order. */
export const PERMISSIONS = [
  'view_stream',
  'send_stream',
  'view_profile',
  'view_contacts',
  'view_storage',
  'write_storage',
  'view_pages',
  'view_wiki',
  'write_pages',
  'write_wiki',
  'post_wall',
  'post_comments',
  'post_mail',
  'post_like',
  'chat',
  'republish',
  'delegate',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

/** A permission set: true or false per permission, null where nothing records it. */
export type PermissionSet = Readonly<Record<Permission, boolean | null>>;

/** The PERMS_* bits of the old abook columns (boot.php before 2.x); wikis came later and have none. */
const LEGACY_BITS: Readonly<Partial<Record<Permission, number>>> = {
  view_stream: 0x00001,
  view_profile: 0x00002,
  view_contacts: 0x00008,
  send_stream: 0x00010,
  post_wall: 0x00020,
  post_comments: 0x00080,
  post_mail: 0x00100,
  chat: 0x00400,
  delegate: 0x00800,
  view_storage: 0x01000,
  write_storage: 0x02000,
  view_pages: 0x04000,
  write_pages: 0x08000,
  republish: 0x10000,
  post_like: 0x20000,
};

/**
 * One direction of a connection's permissions: from its abconfig rows of
 * `category`, else from the legacy bit field; null when neither records any.
 */
export function decodePermissions(
  settings: readonly ConnectionSettingRecord[],
  category: 'my_perms' | 'their_perms',
  legacyBits: number,
): PermissionSet | null {
  const rows = new Map(settings.filter((s) => s.cat === category).map((s) => [s.k, s.v]));
  if (rows.size > 0) {
    const out = {} as Record<Permission, boolean | null>;
    for (const perm of PERMISSIONS) {
      const v = rows.get(perm);
      out[perm] = v === undefined ? null : Number(v) !== 0;
    }
    return out;
  }
  if (legacyBits !== 0) {
    const out = {} as Record<Permission, boolean | null>;
    for (const perm of PERMISSIONS) {
      const bit = LEGACY_BITS[perm];
      out[perm] = bit === undefined ? null : (legacyBits & bit) !== 0;
    }
    return out;
  }
  return null;
}

/** The answer of perm_allowed as a set: every permission it names, null for any it left out. */
export function permissionSetOf(answer: ReadonlyMap<string, boolean>): PermissionSet {
  const out = {} as Record<Permission, boolean | null>;
  for (const perm of PERMISSIONS) out[perm] = answer.get(perm) ?? null;
  return out;
}
