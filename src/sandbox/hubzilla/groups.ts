/** Privacy groups: the group and group_members endpoints (reference §1.5). */
import type { ApiContext } from './context.js';
import { joinedConnection } from './connections.js';
import { EMPTY_JSON, json, type ApiResult } from './reply.js';
import { intParam, param } from './request-params.js';

/** group: a bare array of the channel's groups; deleted ones (`deleted:1`) are not filtered out. */
export function listGroups(ctx: ApiContext): ApiResult {
  return json(ctx.store.groups.filter((g) => g.uid === ctx.channel.channel_id).map((g) => ({ ...g })));
}

/**
 * group_members: `group_id`, else `group_name` (exact gname). Rows of
 * `pgrp_member LEFT JOIN abook LEFT JOIN xchan`: a member without an
 * address-book entry has every `abook_*` null. Missing parameter or unknown
 * group -> empty body typed application/json (the handler returns null).
 */
export function listGroupMembers(ctx: ApiContext): ApiResult {
  const { store, channel, params } = ctx;
  const uid = channel.channel_id;
  const id = intParam(params, 'group_id');
  const name = param(params, 'group_name');
  const group = id ? store.groups.find((g) => g.id === id && g.uid === uid) : name ? store.groups.find((g) => g.gname === name && g.uid === uid) : undefined;
  if (!group) return EMPTY_JSON;
  const members = store.groupMembers.filter((m) => m.gid === group.id && m.uid === uid);
  return json(members.map((m) => ({ ...m, ...joinedConnection(store, uid, m.xchan) })));
}
