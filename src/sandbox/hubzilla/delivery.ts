/**
 * Delivery to the other channels of this hub: what the Notifier does after
 * item_store() for a new post or comment, played for the local channels
 * only (remote ones have no store here).
 *
 * Recipients are those of `collect_recipients()` (include/items.php, 8.8):
 * a public item goes to every connection (not self, pending or archived);
 * a private one to `allow_cid` plus the members of `allow_gid`, every
 * connection when neither is set, less `deny_cid` and the members of
 * `deny_gid`. The list then passes `check_list_permissions()`, which asks
 * `deliverable_abook_xchans()` (include/connections.php) with it as a
 * filter: an empty list is no filter, so an item whose audience resolved to
 * nobody (an empty privacy group, members all gone) reaches every
 * connection, as a real 8.8.7 hub does. 10.x is assumed to match (its
 * include/items.php was not readable).
 *
 * A recipient keeps a copy: same uuid and message id, its own row id, not
 * a wall item, unseen, received now; a comment lands in the recipient's
 * copy of the thread, or nowhere when it has none.
 */
import { expandAcl } from './acl.js';
import type { ChannelRow, ItemRow } from './records.js';
import type { Store } from './store.js';

/** `collect_recipients()` then `check_list_permissions()`: the xchan hashes an item goes to. */
export function recipientsOf(store: Store, item: ItemRow): string[] {
  const connections = store.abooks
    .filter((a) => a.abook_channel === item.uid && a.abook_self === 0 && a.abook_pending === 0 && a.abook_archived === 0)
    .map((a) => a.abook_xchan);
  const isPrivate = item.allow_cid !== '' || item.allow_gid !== '' || item.deny_cid !== '' || item.deny_gid !== '';
  if (!isPrivate) return connections;
  let recipients = [...new Set([...expandAcl(item.allow_cid), ...membersOf(store, item.uid, expandAcl(item.allow_gid))])];
  if (item.allow_cid === '' && item.allow_gid === '') recipients.push(...connections);
  const deny = new Set([...expandAcl(item.deny_cid), ...membersOf(store, item.uid, expandAcl(item.deny_gid))]);
  if (recipients.length > 0 && deny.size > 0) recipients = recipients.filter((x) => !deny.has(x));
  const allowed = recipients.filter((x) => connections.includes(x));
  // deliverable_abook_xchans() with an empty list applies no filter at all: every connection.
  return allowed.length > 0 ? allowed : connections;
}

/** `AccessList::expand()`: the member xchans of the channel's groups named by hash. */
function membersOf(store: Store, uid: number, groupHashes: readonly string[]): string[] {
  const ids = new Set(store.groups.filter((g) => g.uid === uid && g.deleted === 0 && groupHashes.includes(g.hash)).map((g) => g.id));
  return store.groupMembers.filter((m) => m.uid === uid && ids.has(m.gid)).map((m) => m.xchan);
}

/** Copies a new item to every local channel among its recipients that takes the sender's stream. */
export function deliverLocally(store: Store, item: ItemRow, now: string): void {
  const sender = store.channelById(item.uid);
  if (!sender || item.item_type !== 0) return;
  for (const hash of recipientsOf(store, item)) {
    const channel = store.channels.find((c) => c.channel_hash === hash && c.channel_id !== item.uid);
    if (channel && takesStreamOf(store, channel, sender)) copyTo(store, channel, item, now);
  }
}

function takesStreamOf(store: Store, channel: ChannelRow, sender: ChannelRow): boolean {
  const abook = store.abooks.find((a) => a.abook_channel === channel.channel_id && a.abook_xchan === sender.channel_hash);
  return abook !== undefined && abook.abook_blocked === 0 && abook.abook_archived === 0;
}

function copyTo(store: Store, channel: ChannelRow, item: ItemRow, now: string): void {
  const uid = channel.channel_id;
  if (store.items.some((i) => i.uid === uid && i.mid === item.mid)) return;
  const top = item.id === item.parent;
  const thread = top ? undefined : store.items.find((i) => i.uid === uid && i.mid === item.parent_mid && i.id === i.parent);
  if (!top && !thread) return;
  const { id: _id, parent: _parent, ...fields } = item;
  const copy = store.insertItem({
    ...fields,
    uid,
    aid: channel.channel_account_id,
    item_wall: 0,
    item_origin: 0,
    item_unseen: 1,
    received: now,
    changed: now,
  });
  if (thread) {
    copy.parent = thread.id;
    thread.commented = item.created;
    thread.changed = now;
  }
}
