/**
 * Channel-level endpoints: channel/export/basic, verify and channel/list.
 * The first two return the channel's secrets exactly as the real hub does
 * (private key, password hash and salt: reference §1.5 and hubzilla.md item 7),
 * so that the gateway can be tested to strip them.
 */
import { encodeItem } from './activity.js';
import type { ApiContext } from './context.js';
import { wallItems } from './items.js';
import { addSeconds } from './dates.js';
import type { ChannelRow } from './records.js';
import { json, type ApiResult } from './reply.js';
import { param } from './request-params.js';
import type { Store } from './store.js';
import { COMPATIBILITY } from './versions.js';

/** `get_default_export_sections()` in 8.8.7 (chatrooms, events, webpages, wikis are commented out). */
const DEFAULT_SECTIONS = ['channel', 'connections', 'config', 'apps'];

/** Legacy per-permission channel columns and the permission each mirrors; stored as numeric strings. */
const PERMISSION_COLUMNS: readonly [string, string][] = [
  ['channel_r_stream', 'view_stream'],
  ['channel_w_stream', 'send_stream'],
  ['channel_r_profile', 'view_profile'],
  ['channel_r_abook', 'view_contacts'],
  ['channel_r_storage', 'view_storage'],
  ['channel_w_storage', 'write_storage'],
  ['channel_r_pages', 'view_pages'],
  ['channel_w_pages', 'write_pages'],
  ['channel_w_wall', 'post_wall'],
  ['channel_w_comment', 'post_comments'],
  ['channel_w_mail', 'post_mail'],
  ['channel_w_like', 'post_like'],
  ['channel_w_chat', 'chat'],
  ['channel_a_republish', 'republish'],
  ['channel_a_delegate', 'delegate'],
];

function channelColumns(c: ChannelRow): Record<string, unknown> {
  const { channel_password: _password, channel_salt: _salt, ...row } = c;
  return row;
}

/** The export's `channel`: the full row, private key included, plus permission columns and `perm_limits`. */
function exportedChannel(store: Store, c: ChannelRow): Record<string, unknown> {
  const out = channelColumns(c);
  for (const [column, perm] of PERMISSION_COLUMNS) out[column] = store.pconfigValue(c.channel_id, 'perm_limits', perm) ?? '128';
  out.perm_limits = store.pconfig.filter((p) => p.uid === c.channel_id && p.cat === 'perm_limits').map((p) => ({ ...p }));
  return out;
}

/**
 * channel/export/basic: `sections` (comma-separated) or the defaults; `posts`
 * is not read at all (channel_export_basic_posts.txt). Always `compatibility`
 * and `relocate`; `items` = wall posts of the last month (the code comment says
 * three months, the SQL says one).
 */
export function exportChannel(ctx: ApiContext): ApiResult {
  const { store, channel } = ctx;
  const uid = channel.channel_id;
  const requested = (param(ctx.params, 'sections') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const sections = new Set(requested.length > 0 ? requested : DEFAULT_SECTIONS);
  const out: Record<string, unknown> = {
    compatibility: { project: 'hubzilla', ...COMPATIBILITY[store.version], server_role: 'pro' },
    relocate: { channel_address: channel.channel_address, url: store.base },
  };
  if (sections.has('channel')) {
    out.channel = exportedChannel(store, channel);
    out.profile = store.profiles.filter((p) => p.uid === uid).map((p) => ({ ...p }));
  }
  if (sections.has('connections')) {
    const abooks = store.abooks.filter((a) => a.abook_channel === uid);
    const hashes = new Set(abooks.map((a) => a.abook_xchan));
    out.abook = abooks.map((a) => ({ ...a }));
    out.xchan = store.xchans.filter((x) => hashes.has(x.xchan_hash)).map((x) => ({ ...x }));
    out.hubloc = store.hublocs.filter((h) => hashes.has(h.hubloc_hash)).map((h) => ({ ...h }));
    out.group = store.groups.filter((g) => g.uid === uid).map((g) => ({ ...g }));
    out.group_member = store.groupMembers.filter((m) => m.uid === uid).map((m) => ({ ...m }));
  }
  if (sections.has('config')) out.config = store.pconfig.filter((p) => p.uid === uid).map((p) => ({ ...p }));
  if (sections.has('items')) {
    const now = store.clock.now();
    const monthAgo = addSeconds(now, -30 * 24 * 3600);
    out.item = wallItems(store, uid, monthAgo, now)
      .filter((i) => i.created > monthAgo)
      .map((i) => encodeItem(store, i, true));
  }
  return json(out);
}

/** verify (not in the spec): the channel row with `channel_password` and `channel_salt`, then its xchan. */
export function verifyChannel(ctx: ApiContext): ApiResult {
  const { store, channel } = ctx;
  return json({ ...channel, ...store.selfXchan(channel) });
}

/** channel/list (not in the spec): the nicknames of the logged-in account's channels. */
export function listChannels(ctx: ApiContext): ApiResult {
  const { store, channel } = ctx;
  return json(
    store.channels
      .filter((c) => c.channel_account_id === channel.channel_account_id && c.channel_removed === 0)
      .sort((a, b) => a.channel_id - b.channel_id)
      .map((c) => c.channel_address),
  );
}
