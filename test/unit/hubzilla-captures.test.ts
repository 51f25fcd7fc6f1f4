/**
 * Every capture of the real Hubzilla 8.8.7 (test/fixtures/hubzilla-captures)
 * fed through the client's failure mapping and normalisation: each body must
 * map to the right result or error. A capture without an expectation fails.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.js';
import { EMPTY, type HubzillaClient, ItemUpdateRefused, parseAnswer } from '../../src/upstreams/hubzilla/client.js';
import { stripSecrets } from '../../src/upstreams/hubzilla/normalise.js';
import { PERMISSIONS } from '../../src/upstreams/hubzilla/permissions.js';
import { cannedHubzillaClient } from '../helpers/hubzilla-client.js';

const DIR = new URL('../fixtures/hubzilla-captures/', import.meta.url);

interface Capture {
  status: number;
  text: string;
}

function load(name: string): Capture {
  const raw = readFileSync(new URL(name, DIR), 'utf8').replace(/\r\n/g, '\n');
  const afterCommand = raw.slice(raw.indexOf('\n\n') + 2);
  const split = afterCommand.indexOf('\n\n');
  const head = split < 0 ? afterCommand : afterCommand.slice(0, split);
  const text = split < 0 ? '' : afterCommand.slice(split + 2);
  const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(head)?.[1]);
  return { status, text };
}

/** A client whose one upstream answer is the capture. */
function clientFor(name: string, channel: string | null = null): HubzillaClient {
  const capture = load(name);
  return cannedHubzillaClient(capture.status, capture.text, channel);
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof UpstreamError) return error.code;
    if (error instanceof ItemUpdateRefused) return `REFUSED: ${error.message}`;
    throw error;
  }
  return 'OK';
}

const NOTES = '433bfe7d-57cc-4649-9dc5-844aa7d9828c';
const PHOTO = 'e5380b4c-6181-4648-919a-5da3252a2bfa';
const page = { offset: 0, limit: 10 };
const post = { body: 'x' };

/** Raw body classification for endpoints the gateway does not call. */
function raw(name: string): unknown {
  const capture = load(name);
  return parseAnswer(capture.status, capture.text, { name: 'hubzilla', status: capture.status, method: 'GET', path: '/x' });
}

type Check = () => Promise<void>;

const CHECKS: Record<string, Check> = {
  // --- connection settings, permissions, exports and photos; raw() only for forms the gateway never sends ---
  'abconfig.txt': async () => expect(await clientFor('abconfig.txt').listConnectionSettings()).toEqual([]),
  'abconfig_by_abook_id.txt': async () => expect(await clientFor('abconfig_by_abook_id.txt').listConnectionSettings()).toEqual([]),
  'abconfig_empty.txt': async () => expect(await clientFor('abconfig_empty.txt').listConnectionSettings()).toEqual([]),
  // The gateway asks without `perm` (all 17 at once); with it, the hub answers booleans instead of 0/1.
  'perm_allowed_abook_id.txt': async () =>
    expect(await clientFor('perm_allowed_abook_id.txt').allowedPermissions({ abook_id: 2 })).toEqual(new Map([['post_wall', true]])),
  'perm_allowed_abook_id_all.txt': async () => {
    const allowed = await clientFor('perm_allowed_abook_id_all.txt').allowedPermissions({ abook_id: 2 });
    expect([...(allowed?.keys() ?? [])]).toEqual([...PERMISSIONS]);
    expect([...(allowed?.values() ?? [])].every((v) => v === true)).toBe(true);
  },
  'perm_allowed_address_all.txt': async () => {
    // By address or hash the hub evaluates an unknown observer: the owner's own address gets no post_wall.
    const allowed = await clientFor('perm_allowed_address_all.txt').allowedPermissions({ hash: 'x' });
    expect(allowed?.size).toBe(17);
    expect(allowed?.get('post_wall')).toBe(false);
  },
  'perm_allowed_address_one.txt': async () => expect(raw('perm_allowed_address_one.txt')).toHaveLength(1),
  'perm_allowed_address_post_wall.txt': async () => expect(raw('perm_allowed_address_post_wall.txt')).toEqual([{ perm: 'post_wall', allowed: false }]),
  'perm_allowed_unknown_perm.txt': async () => expect(raw('perm_allowed_unknown_perm.txt')).toHaveLength(1),
  'err_perm_allowed_missing_param.txt': async () =>
    expect(await clientFor('err_perm_allowed_missing_param.txt').allowedPermissions({ abook_id: 999 })).toBeNull(),
  'oauth2_token_client_credentials.txt': async () => expect(raw('oauth2_token_client_credentials.txt')).toMatchObject({ token_type: 'Bearer' }),
  'version.txt': async () => expect(raw('version.txt')).toBe('8.8.7'),
  'version_xml.txt': async () => expect(() => raw('version_xml.txt')).toThrow(/not JSON/),
  'item_export_page.txt': async () => expect(raw('item_export_page.txt')).toMatchObject({ items_total: expect.any(Number) }),
  'file_export.txt': async () => {
    const exported = await clientFor('file_export.txt').exportFile(NOTES);
    expect(exported?.original_channel).toBe('tester');
    expect(exported?.attach.map((a) => [a.display_path, a.is_dir])).toEqual([
      ['2026-11', true],
      ['2026-11/notes.txt', false],
    ]);
    expect(exported?.attach[1]?.creator).toMatch(/^9v2V/);
  },
  'file_export_page.txt': async () => expect(raw('file_export_page.txt')).toMatchObject({ success: true }),
  'file_export_photo.txt': async () =>
    expect((await clientFor('file_export_photo.txt').exportFile(PHOTO))?.attach.at(-1)).toMatchObject({ hash: PHOTO, is_photo: true }),
  'err_file_export_missing_param.txt': async () => expect(await clientFor('err_file_export_missing_param.txt').exportFile(NOTES)).toBeNull(),
  'err_file_export_notfound.txt': async () => expect(await clientFor('err_file_export_notfound.txt').exportFile(NOTES)).toBeNull(),
  'file.txt': async () => expect(raw('file.txt')).toMatchObject({ attach: { hash: NOTES } }),
  'err_file_notfound.txt': async () => expect(raw('err_file_notfound.txt')).toBe(EMPTY),
  'photo.txt': async () => {
    const photo = await clientFor('photo.txt').getPhoto(PHOTO, 0);
    expect(photo).toMatchObject({ resource_id: PHOTO, imgscale: 0, mimetype: 'image/png' });
    expect(
      Buffer.from(photo?.content ?? '', 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
  },
  'photo_scale2.txt': async () => expect(await clientFor('photo_scale2.txt').getPhoto(PHOTO, 2)).toMatchObject({ imgscale: 2 }),
  'err_photo_notfound.txt': async () => expect(await clientFor('err_photo_notfound.txt').getPhoto(PHOTO, 0)).toBeNull(),
  'err_unknown_endpoint.txt': async () => expect(await codeOf(clientFor('err_unknown_endpoint.txt').listGroups())).toBe('NOT_FOUND'),
  'session_cookie_reuse_without_basic.txt': async () => expect(await clientFor('session_cookie_reuse_without_basic.txt').listGroups()).toHaveLength(1),
  'channel_stream_POST.txt': async () => {
    // The stream's POST branch creates a post ({success,item_id,activity}); the gateway posts through item/update, but reads this shape too.
    const result = await clientFor('channel_stream_POST.txt').updateItem(post);
    expect(result.item?.body).toBe('posted via channel/stream POST');
  },
  'network_stream_POST.txt': async () => expect(raw('network_stream_POST.txt')).toBe(EMPTY),

  // --- channel ---
  'channel_list.txt': async () => expect(await clientFor('channel_list.txt').listChannels()).toEqual(['tester']),
  'channel_list_two_channels.txt': async () => expect(await clientFor('channel_list_two_channels.txt').listChannels()).toEqual(['tester', 'tester2']),
  'verify.txt': async () => {
    const channel = await clientFor('verify.txt').getChannel();
    expect(channel).toMatchObject({ channel_id: 2, channel_address: 'tester', channel_name: 'Test Channel' });
    expect(JSON.stringify(channel)).not.toMatch(/prvkey|password|salt|PRIVATE KEY/i);
  },
  'channel_export_basic.txt': async () => expectClean(await clientFor('channel_export_basic.txt').exportChannel(null), ['channel', 'abook', 'xchan', 'config']),
  'channel_export_basic_items.txt': async () => expectClean(await clientFor('channel_export_basic_items.txt').exportChannel(['items']), ['item']),
  'channel_export_basic_posts.txt': async () => expectClean(await clientFor('channel_export_basic_posts.txt').exportChannel(null), ['channel']),
  'channel_export_basic_sections.txt': async () =>
    expectClean(await clientFor('channel_export_basic_sections.txt').exportChannel(['channel', 'connections']), ['channel', 'abook']),
  'err_channel_export_noauth.txt': async () => expect(await codeOf(clientFor('err_channel_export_noauth.txt').exportChannel(null))).toBe('UNAUTHENTICATED'),

  // --- streams and items ---
  'channel_stream.txt': async () => {
    const [item] = await clientFor('channel_stream.txt').listChannelStream(null);
    expect(item).toMatchObject({ body: 'hello', id: null, expires: null, created: '2026-11-21T22:17:51.000Z', mimetype: 'text/bbcode' });
    expect(item?.author?.address).toBe('tester@127.0.0.1:8088');
    expect(item?.flags.thread_top).toBe(true);
  },
  'channel_stream_after_posts.txt': async () => expect(await clientFor('channel_stream_after_posts.txt').listChannelStream(null)).toHaveLength(5),
  'channel_stream_empty.txt': async () => expect(await clientFor('channel_stream_empty.txt').listChannelStream(null)).toEqual([]),
  'channel_stream_mindate_future.txt': async () =>
    expect(await clientFor('channel_stream_mindate_future.txt').listChannelStream('2030-01-01 00:00:00')).toEqual([]),
  'network_stream.txt': async () => {
    const result = await clientFor('network_stream.txt').listNetworkStream({}, page);
    expect(result.items.flatMap((t) => t.items)).toHaveLength(5);
    expect(result.full).toBe(false);
  },
  'network_stream_empty.txt': async () => expect((await clientFor('network_stream_empty.txt').listNetworkStream({}, page)).items).toEqual([]),
  'network_stream_page2.txt': async () => expect((await clientFor('network_stream_page2.txt').listNetworkStream({}, page)).items).toEqual([]),
  'network_stream_order_post_top.txt': async () =>
    expect((await clientFor('network_stream_order_post_top.txt').listNetworkStream({ order: 'post', top: true }, page)).items).toHaveLength(7),
  'network_stream_search.txt': async () =>
    expect((await clientFor('network_stream_search.txt').listNetworkStream({ search: 'hello' }, page)).items).toHaveLength(1),
  'network_stream_since_id.txt': async () =>
    expect((await clientFor('network_stream_since_id.txt').listNetworkStream({ since_id: 4 }, page)).items).toHaveLength(1),
  'network_stream_start_records.txt': async () => {
    // records=1 was asked; the gateway asks one more to learn whether a next page exists.
    const result = await clientFor('network_stream_start_records.txt').listNetworkStream({}, { offset: 0, limit: 1 });
    expect(result.items).toHaveLength(1);
  },
  'network_stream_bad_cid.txt': async () => expect(await codeOf(clientFor('network_stream_bad_cid.txt').listNetworkStream({}, page))).toBe('UPSTREAM_ERROR'),
  'network_stream_gid_and_group.txt': async () =>
    expect(await codeOf(clientFor('network_stream_gid_and_group.txt').listNetworkStream({}, page))).toBe('UPSTREAM_ERROR'),
  'network_stream_gid_only.txt': async () => expect(await codeOf(clientFor('network_stream_gid_only.txt').listNetworkStream({}, page))).toBe('UPSTREAM_ERROR'),
  'item_full_by_item_id.txt': async () => {
    const thread = await clientFor('item_full_by_item_id.txt').getItemThread({ item_id: 1 });
    expect(thread?.map((i) => [i.id, i.parent, i.body])).toEqual([
      [1, 1, 'hello (edited)'],
      [5, 1, 'a comment'],
    ]);
    expect(thread?.[0]?.flags).toMatchObject({ wall: true, starred: false, thread_top: true, verified: true });
    expect(thread?.[0]?.attach).toEqual([]);
  },
  'item_full_by_mid.txt': async () => expect((await clientFor('item_full_by_mid.txt').getItemThread({ mid: 'x' }))?.length).toBeGreaterThan(0),
  'item_full_private.txt': async () => {
    const [top] = (await clientFor('item_full_private.txt').getItemThread({ item_id: 8 })) ?? [];
    expect(top?.flags.private).toBe(true);
    expect(top?.allow_gid).toEqual(['496f5b52-965a-4bc5-9f24-235803647a12']);
  },
  'item_full_comment_id_returns_empty.txt': async () =>
    expect(await clientFor('item_full_comment_id_returns_empty.txt').getItemThread({ item_id: 5 })).toBeNull(),
  'err_item_full_missing_param.txt': async () => expect(await clientFor('err_item_full_missing_param.txt').getItemThread({ item_id: 0 })).toBeNull(),
  'err_item_full_notfound.txt': async () => expect(await clientFor('err_item_full_notfound.txt').getItemThread({ item_id: 9999 })).toBeNull(),
  'item_update_post.txt': async () => {
    const result = await clientFor('item_update_post.txt').updateItem({ body: 'hello' });
    expect(result.item).toMatchObject({ body: 'hello', expires: null, comments_closed: null, permalink: expect.stringContaining('/item/') });
    expect(result.item_id).toBe(result.item?.id);
  },
  'item_update_comment.txt': async () => {
    const { item } = await clientFor('item_update_comment.txt').updateItem({ body: 'a comment', parent: 1 });
    expect(item?.message_top).not.toBe(item?.message_id);
    expect(item?.flags.thread_top).toBe(false);
  },
  'item_update_edit.txt': async () =>
    expect((await clientFor('item_update_edit.txt').updateItem({ body: 'hello (edited)', post_id: 1 })).item?.body).toBe('hello (edited)'),
  'item_update_media.txt': async () => expect((await clientFor('item_update_media.txt').updateItem({ body: 'post with image' })).item?.body).toMatch(/\[zmg/),
  'item_update_media_text.txt': async () => {
    const { item } = await clientFor('item_update_media_text.txt').updateItem({ body: 'post with text attachment' });
    expect(item?.attach).toHaveLength(1);
    expect(item?.attach[0]?.type).toBe('text/plain');
  },
  'item_update_private_acl_category.txt': async () => {
    const { item } = await clientFor('item_update_private_acl_category.txt').updateItem({ body: 'private post' });
    expect(item?.tags.filter((t) => t.type === 'category').map((t) => t.tag)).toEqual(['cat1', 'cat2']);
    expect(item).toMatchObject({ app: 'MyGateway', location: 'Somewhere', longlat: '1.5 2.5' });
    expect(item?.flags).toMatchObject({ private: true, nocomment: true });
  },
  'item_update_app_and_plink_fields.txt': async () =>
    expect((await clientFor('item_update_app_and_plink_fields.txt').updateItem(post)).item?.permalink).toBe('http://example.invalid/used'),
  'item_update_via_GET.txt': async () => expect((await clientFor('item_update_via_GET.txt').updateItem(post)).item?.body).toBe('posted with GET'),
  'err_item_update_bad_parent.txt': async () =>
    expect(await codeOf(clientFor('err_item_update_bad_parent.txt').updateItem({ body: 'x', parent: 9999 }))).toBe('REFUSED: invalid post id'),
  'err_item_update_bad_post_id.txt': async () =>
    expect(await codeOf(clientFor('err_item_update_bad_post_id.txt').updateItem({ body: 'x', post_id: 9999 }))).toBe('NOT_FOUND'),
  'err_item_update_json_body.txt': async () => expect(await codeOf(clientFor('err_item_update_json_body.txt').updateItem(post))).toBe('REFUSED: no content'),
  'err_item_update_no_body.txt': async () => expect(await codeOf(clientFor('err_item_update_no_body.txt').updateItem(post))).toBe('REFUSED: no content'),

  // --- xchans and connections ---
  'xchan_address.txt': async () => {
    const x = await clientFor('xchan_address.txt').getXchan('address', 'tester@127.0.0.1:8088');
    expect(x).toMatchObject({ address: 'tester@127.0.0.1:8088', network: 'zot6', hidden: true, deleted: false, flags: 0 });
    expect(x?.photo_date).toMatch(/Z$/);
  },
  'xchan_guid.txt': async () =>
    expect(
      (await clientFor('xchan_guid.txt').getXchan('guid', '85b_VxQqpZW3PIGBSMCZv3fMxqrXYV8C4Ua14MHJE1HhfOhK7TIyAtjrJzYO3PI1uJUJqLVvBDtQ3m9vcQmSPw'))?.name,
    ).toBe('Test Channel'),
  'xchan_hash.txt': async () =>
    expect(
      (await clientFor('xchan_hash.txt').getXchan('hash', '9v2VzVaz3Hy53Hpw42a9j0_vfKT_vkS2fQG6hRuZOdLyZfqZeyJ62nXwuH37fSlnyS3TU_iNmYwZ6_STq86SsQ'))?.hash,
    ).toMatch(/^9v2V/),
  'err_xchan_notfound.txt': async () => expect(await clientFor('err_xchan_notfound.txt').getXchan('address', 'nobody@example.invalid')).toBeNull(),
  'err_xchan_missing_param.txt': async () => expect(raw('err_xchan_missing_param.txt')).toBe(false),
  'err_xchan_quote_in_value.txt': async () => {
    // The hub answers `false` after a SQL error; the gateway never sends the quote at all.
    await expect(clientFor('err_xchan_quote_in_value.txt').getXchan('address', "o'brien@example.invalid")).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(raw('err_xchan_quote_in_value.txt')).toBe(false);
  },
  'abook.txt': async () => {
    const [self] = await clientFor('abook.txt').listConnections();
    expect(self).toMatchObject({ abook_self: true, abook_blocked: false });
    expect(self?.xchan?.address).toBe('tester@127.0.0.1:8088');
  },
  'abook_by_id.txt': async () => expect(await clientFor('abook_by_id.txt').listConnections()).toHaveLength(1),
  'abook_notfound.txt': async () => expect(await clientFor('abook_notfound.txt').listConnections()).toEqual([]),

  // --- files ---
  'files.txt': async () => expect((await clientFor('files.txt').listFiles({}, page)).items).toEqual([]),
  'files_after_upload.txt': async () => {
    const { items } = await clientFor('files_after_upload.txt').listFiles({}, page);
    expect(items.find((f) => f.is_dir)?.filetype).toBe('multipart/mixed');
    expect(items.every((f) => typeof f.filesize === 'number')).toBe(true);
  },
  'files_email_login.txt': async () => expect((await clientFor('files_email_login.txt').listFiles({}, page)).items).toEqual([]),
  'files_empty_with_records.txt': async () =>
    expect(await clientFor('files_empty_with_records.txt').listFiles({}, { offset: 0, limit: 5 })).toEqual({ items: [], total: null, hasNext: false }),
  'files_filehash.txt': async () => expect((await clientFor('files_filehash.txt').listFiles({}, page)).items.map((f) => f.hash)).toEqual([NOTES]),
  'files_filter_filename.txt': async () => expect((await clientFor('files_filter_filename.txt').listFiles({ filename: 'notes' }, page)).items).toHaveLength(1),
  'files_filter_filetype.txt': async () =>
    expect((await clientFor('files_filter_filetype.txt').listFiles({ filetype: 'image' }, page)).items[0]?.is_photo).toBe(true),
  'files_start_records.txt': async () => expect((await clientFor('files_start_records.txt').listFiles({}, { offset: 1, limit: 1 })).items).toHaveLength(1),
  'files_xml_suffix.txt': async () => expect((await clientFor('files_xml_suffix.txt').listFiles({}, page)).items.length).toBeGreaterThan(0),
  'err_files_badpass.txt': async () => expect(await codeOf(clientFor('err_files_badpass.txt').listFiles({}, page))).toBe('UNAUTHENTICATED'),
  'err_files_noauth.txt': async () => expect(await codeOf(clientFor('err_files_noauth.txt').listFiles({}, page))).toBe('UNAUTHENTICATED'),
  'filemeta.txt': async () =>
    expect(await clientFor('filemeta.txt').getFile(NOTES)).toMatchObject({ hash: NOTES, filename: 'notes.txt', filesize: 22, is_dir: false }),
  'err_filemeta_missing_param.txt': async () => expect(await clientFor('err_filemeta_missing_param.txt').getFile(NOTES)).toBeNull(),
  'err_filemeta_prefix_not_accepted.txt': async () => expect(await clientFor('err_filemeta_prefix_not_accepted.txt').getFile('433bfe7d')).toBeNull(),
  'filedata.txt': async () => {
    const chunk = await clientFor('filedata.txt').getFileData(NOTES, 0, 22);
    expect(Buffer.from(chunk?.content ?? '', 'base64').length).toBe(chunk?.length);
  },
  'filedata_chunk.txt': async () => {
    const chunk = await clientFor('filedata_chunk.txt').getFileData(NOTES, 6, 4);
    expect([chunk?.start, chunk?.length, Buffer.from(chunk?.content ?? '', 'base64').toString()]).toEqual([6, 4, 'text']);
  },
  'filedata_dir.txt': async () => expect(await clientFor('filedata_dir.txt').getFileData('d4811aea-7739-4030-9164-5092bfec7765', 0, 1)).toBeNull(),
  'err_filedata_missing_param.txt': async () => expect(await clientFor('err_filedata_missing_param.txt').getFileData(NOTES, 0, 1)).toBeNull(),
  'err_filedata_notfound.txt': async () => expect(await clientFor('err_filedata_notfound.txt').getFileData('nosuchfile', 0, 1)).toBeNull(),

  // --- photos ---
  'albums.txt': async () => expect(await clientFor('albums.txt').listAlbums()).toEqual([expect.objectContaining({ text: '2026-11', total: 1 })]),
  'albums_empty.txt': async () => expect(await clientFor('albums_empty.txt').listAlbums()).toEqual([]),
  'photos.txt': async () => {
    const [photo, ...rest] = await clientFor('photos.txt').listPhotos(null);
    expect(rest).toEqual([]);
    expect(photo?.scales.map((s) => s.imgscale)).toEqual([0, 1, 2, 3]);
  },
  'photos_album.txt': async () => expect(await clientFor('photos_album.txt').listPhotos('2026-11')).toHaveLength(1),
  'photos_empty.txt': async () => expect(await clientFor('photos_empty.txt').listPhotos(null)).toEqual([]),

  // --- privacy groups ---
  'group.txt': async () =>
    expect(await clientFor('group.txt').listGroups()).toEqual([expect.objectContaining({ gname: 'Friends', visible: false, deleted: false })]),
  'group_channel_param.txt': async () => expect(await clientFor('group_channel_param.txt', 'tester').listGroups()).toHaveLength(1),
  'group_channel_param_second.txt': async () => expect(await clientFor('group_channel_param_second.txt', 'tester2').listGroups()).toHaveLength(1),
  'group_login_as_second_nick.txt': async () => expect(await clientFor('group_login_as_second_nick.txt').listGroups()).toHaveLength(1),
  'group_login_by_email.txt': async () => expect(await clientFor('group_login_by_email.txt').listGroups()).toHaveLength(1),
  'group_oauth2_bearer.txt': async () => expect(await clientFor('group_oauth2_bearer.txt').listGroups()).toHaveLength(1),
  'err_group_channel_param_other.txt': async () => expect(await codeOf(clientFor('err_group_channel_param_other.txt', 'sys').listGroups())).toBe('FORBIDDEN'),
  'err_group_oauth2_bad_bearer.txt': async () => expect(await codeOf(clientFor('err_group_oauth2_bad_bearer.txt').listGroups())).toBe('UNAUTHENTICATED'),
  'err_basic_password_with_colon.txt': async () => expect(await codeOf(clientFor('err_basic_password_with_colon.txt').listGroups())).toBe('UNAUTHENTICATED'),
  'group_members_by_id.txt': async () => {
    const [member] = (await clientFor('group_members_by_id.txt').listGroupMembers(1)) ?? [];
    expect(member).toMatchObject({ gid: 1, connection: { abook_self: true } });
    expect(member?.xchan?.hash).toBe(member?.xchan_hash);
  },
  'group_members_by_name.txt': async () => expect(await clientFor('group_members_by_name.txt').listGroupMembersByName('Friends')).toHaveLength(1),
  'err_group_members_missing_param.txt': async () => expect(await clientFor('err_group_members_missing_param.txt').listGroupMembers(0)).toBeNull(),
  'err_group_members_notfound.txt': async () => expect(await clientFor('err_group_members_notfound.txt').listGroupMembers(999)).toBeNull(),
};

function expectClean(exported: unknown, keys: string[]): void {
  const text = JSON.stringify(exported);
  expect(text).not.toMatch(/prvkey|"[a-z_]*password[a-z_]*"|"[a-z_]*salt[a-z_]*"|PRIVATE KEY|private key redacted/i);
  for (const key of keys) expect(exported).toHaveProperty(key);
}

describe('Hubzilla captures', () => {
  const names = readdirSync(DIR).filter((n) => n.endsWith('.txt'));

  it('has an expectation for every capture', () => {
    expect(names.filter((n) => !(n in CHECKS))).toEqual([]);
    expect(Object.keys(CHECKS).filter((n) => !names.includes(n))).toEqual([]);
  });

  for (const name of names) {
    it(`maps ${name}`, async () => {
      const check = CHECKS[name];
      if (!check) throw new Error(`no expectation for ${name}`);
      await check();
    });
  }

  it('strips secrets at any depth, config rows included', () => {
    const clean = stripSecrets({
      channel: { channel_prvkey: 'k', channel_password: 'p', channel_salt: 's', channel_pubkey: 'pub', nested: [{ xchan_prvkey: 'x', ok: 1 }] },
      config: [
        { cat: 'system', k: 'oauth_token', v: 't' },
        { cat: 'system', k: 'theme', v: 'redbasic' },
      ],
      note: '-----BEGIN RSA PRIVATE KEY-----\nabc',
    });
    expect(clean).toEqual({
      channel: { channel_pubkey: 'pub', nested: [{ ok: 1 }] },
      config: [{ cat: 'system', k: 'theme', v: 'redbasic' }],
      note: '[removed]',
    });
  });
});
