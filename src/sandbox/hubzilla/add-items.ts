/**
 * Hubzilla 10's conversation containers: for every post and comment in a
 * thread the channel owns, `item_store()` also stores an `Add` activity (the
 * channel adding the item to the thread's collection) in the same thread,
 * with an empty body (Zotlabs/Module/Item.php sets `target` to the
 * conversation; item_store returns it as `approval`). The API's filters do
 * not drop them, so they show in the streams, item/full and exports.
 */
import { uuidFor } from './identifiers.js';
import type { ItemRow } from './records.js';
import type { Store } from './store.js';

/** The conversation collection a thread's items are added to: the top's mid with /item/ read as /conversation/. */
function conversationTarget(store: Store, thread: ItemRow, channelAddress: string): string {
  return JSON.stringify({
    id: thread.mid.replace('/item/', '/conversation/'),
    type: 'Collection',
    attributedTo: `${store.base}/channel/${channelAddress}`,
  });
}

/** Stores the `Add` item of `item` (a post or comment of a thread the channel owns) and returns it. */
export function storeAddItem(store: Store, item: ItemRow, channelAddress: string): ItemRow {
  const thread = store.itemById(item.parent) ?? item;
  const uuid = uuidFor(`add:${item.uuid}`);
  item.tgt_type = 'Collection';
  item.target = conversationTarget(store, thread, channelAddress);
  return store.insertItem({
    uuid,
    mid: `${store.base}/activity/${uuid}`,
    uid: item.uid,
    aid: item.aid,
    owner_xchan: thread.owner_xchan,
    author_xchan: thread.owner_xchan,
    created: item.created,
    received: item.received,
    changed: item.changed,
    parent: thread.id,
    parent_mid: thread.mid,
    thr_parent: item.mid,
    verb: 'Add',
    obj_type: item.obj_type,
    obj: JSON.stringify({ id: item.mid, type: item.verb }),
    tgt_type: 'Collection',
    target: item.target,
    sig: '',
    allow_cid: thread.allow_cid,
    allow_gid: thread.allow_gid,
    deny_cid: thread.deny_cid,
    deny_gid: thread.deny_gid,
    item_private: thread.item_private,
    item_wall: thread.item_wall,
    item_thread_top: 0,
    item_origin: 1,
  });
}

/** True when `item` gets an `Add` item on a 10.x hub: a post or comment (not itself an `Add`) in a thread its channel owns. */
export function needsAddItem(store: Store, item: ItemRow, channelHash: string): boolean {
  const thread = store.itemById(item.parent) ?? item;
  return item.verb !== 'Add' && item.item_type === 0 && item.item_hidden === 0 && thread.owner_xchan === channelHash;
}
