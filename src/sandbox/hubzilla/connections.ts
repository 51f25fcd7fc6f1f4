/**
 * Connections and identities: abook, abconfig, perm_allowed and xchan
 * (reference §1.5).
 */
import type { ApiContext } from './context.js';
import { NULL_DATE } from './dates.js';
import type { AbookRow, XchanRow } from './records.js';
import { json, type ApiResult } from './reply.js';
import { intParam, param } from './request-params.js';
import type { Store } from './store.js';
import { hasEncryptionKeys } from './versions.js';

/** The 17 channel permissions, in the order `get_all_perms()` returns them. */
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

const ABOOK_COLUMNS: readonly (keyof AbookRow)[] = [
  'abook_id',
  'abook_account',
  'abook_channel',
  'abook_xchan',
  'abook_my_perms',
  'abook_their_perms',
  'abook_closeness',
  'abook_created',
  'abook_updated',
  'abook_connected',
  'abook_dob',
  'abook_flags',
  'abook_blocked',
  'abook_ignored',
  'abook_hidden',
  'abook_archived',
  'abook_pending',
  'abook_unconnected',
  'abook_self',
  'abook_feed',
  'abook_not_here',
  'abook_profile',
  'abook_incl',
  'abook_excl',
  'abook_instance',
  'abook_role',
];

const XCHAN_COLUMNS: readonly (keyof XchanRow)[] = [
  'xchan_hash',
  'xchan_guid',
  'xchan_guid_sig',
  'xchan_pubkey',
  'xchan_photo_mimetype',
  'xchan_photo_l',
  'xchan_photo_m',
  'xchan_photo_s',
  'xchan_addr',
  'xchan_url',
  'xchan_connurl',
  'xchan_follow',
  'xchan_connpage',
  'xchan_name',
  'xchan_network',
  'xchan_instance_url',
  'xchan_flags',
  'xchan_photo_date',
  'xchan_name_date',
  'xchan_hidden',
  'xchan_orphan',
  'xchan_censored',
  'xchan_selfcensored',
  'xchan_system',
  'xchan_pubforum',
  'xchan_deleted',
];

/** `abook` + `xchan` columns for `hash` as LEFT JOINs give them: null columns where a row is missing. */
export function joinedConnection(store: Store, uid: number, hash: string): Record<string, unknown> {
  const abook = store.abooks.find((a) => a.abook_channel === uid && a.abook_xchan === hash);
  const xchan = store.xchan(hash);
  const out: Record<string, unknown> = {};
  for (const c of ABOOK_COLUMNS) out[c] = abook ? abook[c] : null;
  for (const c of XCHAN_COLUMNS) out[c] = xchan ? xchan[c] : null;
  if (hasEncryptionKeys(store.version)) {
    out.xchan_epubkey = xchan ? (xchan.xchan_epubkey ?? '') : null;
    out.xchan_updated = xchan ? (xchan.xchan_updated ?? NULL_DATE) : null;
  }
  return out;
}

/** abook: the channel's connections (its own "self" entry included) joined with their xchans. */
export function listConnections(ctx: ApiContext): ApiResult {
  const { store, channel, params } = ctx;
  const uid = channel.channel_id;
  const id = intParam(params, 'abook_id');
  const rows = store.abooks.filter((a) => a.abook_channel === uid && (!id || a.abook_id === id)).sort((a, b) => a.abook_id - b.abook_id);
  return json(rows.map((a) => ({ ...a, ...joinedConnection(store, uid, a.abook_xchan) })));
}

/** abconfig: connection metadata rows `{id, chan, xchan, cat, k, v}`; `abook_id` narrows to one connection. */
export function listConnectionConfig(ctx: ApiContext): ApiResult {
  const { store, channel, params } = ctx;
  const uid = channel.channel_id;
  const id = intParam(params, 'abook_id');
  let xchan: string | undefined;
  if (id) {
    xchan = store.abooks.find((a) => a.abook_id === id && a.abook_channel === uid)?.abook_xchan;
    if (!xchan) return json([]);
  }
  return json(store.abconfig.filter((r) => r.chan === uid && (!xchan || r.xchan === xchan)).map((r) => ({ ...r })));
}

/** `xchan_fetch()`: first non-empty of hash, guid, address; local table only. */
function fetchXchan(ctx: ApiContext): XchanRow | false {
  const { store, params } = ctx;
  const hash = param(params, 'hash');
  const guid = param(params, 'guid');
  const address = param(params, 'address');
  const [key, value] = hash ? ['xchan_hash', hash] : guid ? ['xchan_guid', guid] : address ? ['xchan_addr', address] : [undefined, undefined];
  if (!key || value === undefined) return false;
  // The value is interpolated unescaped into SQL: a quote is a DB error, which comes back as false.
  if (value.includes("'")) return false;
  return store.xchans.find((x) => x[key as 'xchan_hash' | 'xchan_guid' | 'xchan_addr'] === value) ?? false;
}

/**
 * xchan: one object with the `xchan_` prefix dropped and `xchan_addr` renamed
 * `address`; missing, unknown or quoted value -> `false` (err_xchan_*.txt).
 */
export function getXchan(ctx: ApiContext): ApiResult {
  const x = fetchXchan(ctx);
  if (!x) return json(false);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(x)) out[k === 'xchan_addr' ? 'address' : k.replace(/^xchan_/, '')] = v;
  return json(out);
}

/**
 * What an observer may do: the channel owner everything; anyone what the
 * limits open to the public (PERMS_PUBLIC 1); a connection also what they
 * open to the network (2) or to all connections (8), and what its abconfig
 * my_perms grant where the limit is per connection (PERMS_SPECIFIC 128).
 */
function allowedPerms(store: Store, uid: number, abook: AbookRow | undefined): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const perm of PERMISSIONS) {
    const limit = store.pconfigValue(uid, 'perm_limits', perm);
    const isPublic = limit === '1';
    let allowed = isPublic;
    if (abook?.abook_self) allowed = true;
    else if (abook && !abook.abook_blocked) {
      allowed =
        isPublic ||
        limit === '2' ||
        (limit === '8' && !abook.abook_pending) ||
        store.abconfig.some((r) => r.chan === uid && r.xchan === abook.abook_xchan && r.cat === 'my_perms' && r.k === perm && r.v === '1');
    }
    out.set(perm, allowed);
  }
  return out;
}

/**
 * perm_allowed: with `perm` `[{perm, allowed:<boolean>}]`, without it all 17
 * as `allowed:0|1` numbers. Only `abook_id` gives real per-connection answers:
 * by hash/guid/address the real code evaluates an anonymous observer (it
 * indexes `xchan_fetch()`'s result as a list), so even the owner's own address
 * gets post_wall=false. An unknown permission is true for the owner. Missing
 * parameters or unknown records -> `false`.
 */
export function permAllowed(ctx: ApiContext): ApiResult {
  const { store, channel, params } = ctx;
  const uid = channel.channel_id;
  const perm = param(params, 'perm') ?? '';
  const id = intParam(params, 'abook_id');
  let abook: AbookRow | undefined;
  if (id) {
    abook = store.abooks.find((a) => a.abook_id === id && a.abook_channel === uid);
    if (!abook) return json(false);
  } else if (!fetchXchan(ctx)) {
    return json(false);
  }
  const perms = allowedPerms(store, uid, abook);
  if (perm) return json([{ perm, allowed: perms.get(perm) ?? Boolean(abook?.abook_self) }]);
  return json([...perms].map(([k, v]) => ({ perm: k, allowed: v ? 1 : 0 })));
}
