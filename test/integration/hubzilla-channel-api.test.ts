/**
 * The rest of the channel API over real HTTP against the sandbox: connection
 * settings and permissions (abconfig, perm_allowed), group members by name,
 * files by hash, file/export, photos at every scale, the export's posts, the
 * remaining item/update fields, and the hub's surprises the gateway handles
 * (edits that would clear fields, ACLs naming unknown hashes). Upstream call
 * counts are exact.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { seedFacts } from '../../src/sandbox/hubzilla/seed.js';
import { createTestApp, type GraphQLResponse, type TestApp } from '../helpers/app.js';

const facts = seedFacts();

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}
const DEMO = basic('demo', 'demo-pass');

// biome-ignore lint/suspicious/noExplicitAny: results are read by path, as a client reads JSON.
type Data = any;

let t: TestApp;

function hz(query: string, variables: Record<string, unknown> = {}, auth: string = DEMO): Promise<GraphQLResponse<Data>> {
  return t.gql<Data>(query, variables, { headers: { 'x-hubzilla-authorization': auth } });
}

/** The upstream paths called since the last reset, without the API prefix, with their query strings. */
function called(): string[] {
  return t.hubzillaCalls().map((c) => {
    const query = Object.entries(c.query)
      .flatMap(([k, vs]) => vs.map((v) => `${k}=${v}`))
      .join('&');
    return `${c.path.slice('/api/z/1.0/'.length)}${query ? `?${query}` : ''}`;
  });
}

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});
beforeEach(() => {
  t.resetHubzillaCalls();
  t.hubzilla.clearFaults();
});

describe('connection settings and permissions', () => {
  const QUERY = `{ channel { connections { restId isSelf xchan { address }
    myPermissions { viewStream viewProfile sendStream postComments postWall viewWiki }
    theirPermissions { viewStream postComments postWall }
    allowedPermissions { viewStream postComments postWall postLike }
    settings { category key value } } } }`;

  it('decodes what the channel grants and is granted, from one abconfig call for every connection', async () => {
    const r = await hz(QUERY.replace(/allowedPermissions \{[^}]*\}/, ''));
    expect(r.errors).toBeUndefined();
    const byAddress = (address: string): Data => r.data.channel.connections.find((c: Data) => c.xchan?.address === address);
    expect(byAddress('dave@mastodon.example').myPermissions).toEqual({
      viewStream: true,
      viewProfile: true,
      sendStream: true,
      postComments: true,
      postWall: false,
      viewWiki: false,
    });
    expect(byAddress('frank@feeds.example').myPermissions).toMatchObject({ viewStream: true, postComments: false });
    // alice's hub reported what she grants: the views and comments.
    expect(byAddress('alice@hub.duograph.test').theirPermissions).toEqual({ viewStream: true, postComments: true, postWall: false });
    expect(byAddress('dave@mastodon.example').theirPermissions).toBeNull();
    // The self entry has no abconfig rows on a real hub (abconfig.txt): nothing is stored, so null, not "all false".
    const self = r.data.channel.connections.find((c: Data) => c.isSelf);
    expect(self).toMatchObject({ myPermissions: null, theirPermissions: null, settings: [] });
    expect(byAddress('dave@mastodon.example').settings).toContainEqual({ category: 'my_perms', key: 'view_stream', value: '1' });
    expect(called()).toEqual(['abook', 'abconfig']);
  });

  it('asks the hub what each connection may do, by address-book id, once per connection', async () => {
    const r = await hz(QUERY);
    expect(r.errors).toBeUndefined();
    const connections = r.data.channel.connections as Data[];
    const dave = connections.find((c) => c.xchan?.address === 'dave@mastodon.example');
    // post_like is open to the whole network by the channel's limits, whatever dave's own settings say.
    expect(dave.allowedPermissions).toEqual({ viewStream: true, postComments: true, postWall: false, postLike: true });
    expect(connections.find((c) => c.isSelf).allowedPermissions).toEqual({ viewStream: true, postComments: true, postWall: true, postLike: true });
    const asked = called().filter((p) => p.startsWith('perm_allowed'));
    expect(asked.sort()).toEqual(connections.map((c) => `perm_allowed?abook_id=${c.restId}`).sort());
  });

  it('checks one permission of a connection by its hash, and of any other identity as the hub grants an unknown observer', async () => {
    const q = 'query ($x: String!, $p: ChannelPermission!) { channel { permissionAllowed(xchanHash: $x, permission: $p) } }';
    const dave = await hz(`{ xchan(address: "dave@mastodon.example") { hash } }`);
    const daveHash = dave.data.xchan.hash as string;
    t.resetHubzillaCalls();
    expect((await hz(q, { x: daveHash, p: 'POST_COMMENTS' })).data.channel.permissionAllowed).toBe(true);
    expect(called().filter((p) => p.startsWith('perm_allowed'))).toEqual([expect.stringMatching(/^perm_allowed\?abook_id=\d+$/)]);
    expect((await hz(q, { x: daveHash, p: 'POST_WALL' })).data.channel.permissionAllowed).toBe(false);
    t.resetHubzillaCalls();
    const grace = await hz(q, { x: facts.graceXchan, p: 'VIEW_STREAM' });
    expect(grace.data.channel.permissionAllowed).toBe(true);
    expect((await hz(q, { x: facts.graceXchan, p: 'POST_COMMENTS' })).data.channel.permissionAllowed).toBe(false);
    expect(called()).toContain(`perm_allowed?hash=${facts.graceXchan}`);
  });

  it('refuses an unsafe hash before any call', async () => {
    const r = await hz('{ channel { permissionAllowed(xchanHash: "x\' or 1=1", permission: VIEW_STREAM) } }');
    expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(called().filter((p) => p.startsWith('perm_allowed'))).toEqual([]);
  });
});

describe('group members by name', () => {
  it('reads the members of a group by its name in one call; null for an unknown name', async () => {
    const r = await hz(
      '{ channel { work: privacyGroupMembers(name: "Work") { groupRestId xchan { address } } none: privacyGroupMembers(name: "No such") { restId } } }',
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.channel.work.map((m: Data) => m.xchan.address).sort()).toEqual(['alice@hub.duograph.test', 'carol@hub.example.com', 'dave@mastodon.example']);
    expect(new Set(r.data.channel.work.map((m: Data) => m.groupRestId))).toEqual(new Set([facts.groups.Work?.id]));
    expect(r.data.channel.none).toBeNull();
    expect(called().sort()).toEqual(['group_members?group_name=No such', 'group_members?group_name=Work']);
  });
});

describe('files', () => {
  it('filters files by exact hash (filehash) and refuses a hash with wildcards before any call', async () => {
    const hash = facts.files['notes.txt'];
    const r = await hz('query ($h: String) { channel { files(hash: $h) { nodes { hash filename } } } }', { h: hash });
    expect(r.data.channel.files.nodes).toEqual([{ hash, filename: 'notes.txt' }]);
    expect(called()).toEqual([`files?filehash=${hash}&start=0&records=21`]);
    t.resetHubzillaCalls();
    const bad = await hz('{ channel { files(hash: "4%") { nodes { hash } } } }');
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(called()).toEqual([]);
  });

  it('exports a file with its folders (file/export), whose rows carry the creator', async () => {
    const hash = facts.files['notes.txt'];
    const r = await hz(
      'query ($h: String!) { channel { file(hash: $h) { export { fetchUrl originalChannel folders { displayPath isDirectory } file { hash filename creator { address } } } } } }',
      { h: hash },
    );
    expect(r.errors).toBeUndefined();
    const exported = r.data.channel.file.export;
    expect(exported.fetchUrl).toMatch(/\/getfile$/);
    expect(exported.originalChannel).toBe('demo');
    expect(exported.folders).toEqual([{ displayPath: 'Documents', isDirectory: true }]);
    expect(exported.file).toEqual({ hash, filename: 'notes.txt', creator: { address: 'demo@hub.duograph.test' } });
  });

  it('resolves null for a file the hub no longer exports', async () => {
    t.hubzilla.addFault({ path: 'file/export', status: 200, body: '{"fetch_url":"x","original_channel":"demo","attach":[]}' });
    const r = await hz('query ($h: String!) { channel { file(hash: $h) { export { fetchUrl } } } }', { h: facts.files['notes.txt'] });
    expect(r.errors).toBeUndefined();
    expect(r.data.channel.file.export).toBeNull();
  });

  it("reads each file's creator once per channel: a page costs one filemeta per file the first time, none after, whichever login of the channel asks", async () => {
    const own = await createTestApp({ hubzillaSandbox: { bulkFiles: 12 } });
    try {
      const q = '{ channel { files(first: 12, filename: "bulk-") { nodes { creator { address } } } } }';
      const ask = async (auth: string) => {
        own.resetHubzillaCalls();
        const r = await own.gql<Data>(q, {}, { headers: { 'x-hubzilla-authorization': auth } });
        expect(r.errors).toBeUndefined();
        expect(r.data.channel.files.nodes).toHaveLength(12);
        for (const node of r.data.channel.files.nodes) expect(node.creator.address).toBe('demo@hub.duograph.test');
        return own.hubzillaCalls().map((c) => c.path.slice('/api/z/1.0/'.length));
      };
      // The first read learns which channel the hub verifies the login as (verify), then each creator.
      const first = await ask(DEMO);
      expect(first.filter((p) => p === 'filemeta')).toHaveLength(12);
      expect(first.filter((p) => p === 'files' || p === 'verify')).toEqual(['files', 'verify']);
      const again = await ask(DEMO);
      expect(again.filter((p) => p !== 'xchan')).toEqual(['files']);
      // The same channel logged into by its account's email: the hub verifies it as the same channel, which shares what it read.
      const byEmail = await ask(basic('demo@example.com', 'demo-pass'));
      expect(byEmail.filter((p) => p !== 'xchan')).toEqual(['files', 'verify']);
      // A login the hub does not verify learns nothing: it gets the hub's refusal.
      own.resetHubzillaCalls();
      const wrong = await own.gql<Data>(q, {}, { headers: { 'x-hubzilla-authorization': basic('demo', 'not-the-password') } });
      expect(wrong.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    } finally {
      await own.close();
    }
  });
});

describe('stored answers, per channel the hub verified', () => {
  it('serves one login of a channel what another login of it read; a login not yet verified reads for itself', async () => {
    const own = await createTestApp({ env: { CACHE_MAX_AGE_MS: '60000' } });
    try {
      const read = async (auth: string, query: string) => {
        own.resetHubzillaCalls();
        const r = await own.gql<Data>(query, {}, { headers: { 'x-hubzilla-authorization': auth } });
        expect(r.errors).toBeUndefined();
        return { data: r.data, calls: own.hubzillaCalls().map((c) => c.path.slice('/api/z/1.0/'.length)) };
      };
      const STREAM = '{ channel { stream(since: "2026-01-01T00:00:00Z", first: 5) { nodes { uuid } } } }';
      const email = basic('demo@example.com', 'demo-pass');
      // Before verify, each login reads for itself.
      expect((await read(DEMO, STREAM)).calls).toEqual(['channel/stream']);
      expect((await read(email, STREAM)).calls).toEqual(['channel/stream']);
      // Once the hub verified both as channel demo, what one reads serves the other (asked another way than
      // before: each login's answer to STREAM itself is kept whole for that login).
      await read(DEMO, '{ channel { nickname } }');
      await read(email, '{ channel { nickname } }');
      const again = STREAM.replace('channel {', 'mine: channel {');
      const byNickname = await read(DEMO, again);
      expect(byNickname.calls).toEqual(['channel/stream']);
      const byEmail = await read(email, again);
      expect(byEmail.calls).toEqual([]);
      expect(byEmail.data).toEqual(byNickname.data);
      // Another channel of the account is another scope.
      expect((await read(basic('demo-projects', 'demo-pass'), STREAM)).calls).toEqual(['channel/stream']);
    } finally {
      await own.close();
    }
  });
});

describe('photos at every scale', () => {
  const hash = (): string => {
    const h = facts.files['sunrise.png'];
    if (!h) throw new Error('no seeded photo');
    return h;
  };

  async function hubPhoto(scale: number): Promise<Buffer> {
    const res = await fetch(`${t.hubzilla.url}/api/z/1.0/photo?photo_id=${hash()}&scale=${scale}`, { headers: { authorization: DEMO } });
    const body = (await res.json()) as { photo: { content: string } };
    return Buffer.from(body.photo.content, 'base64');
  }

  it('gives each scale a download path that serves its bytes, with Range', async () => {
    const r = await hz('{ channel { albums { photos { resourceId scales { scale downloadUrl } } } } }');
    const photo = r.data.channel.albums.flatMap((a: Data) => a.photos).find((p: Data) => p.resourceId === hash());
    expect(photo.scales.map((s: Data) => s.scale)).toEqual([0, 1, 2, 3]);
    const scale2 = photo.scales.find((s: Data) => s.scale === 2).downloadUrl as string;
    expect(scale2).toBe(`/downloads/hubzilla/photos/${hash()}/2`);
    const expected = await hubPhoto(2);
    t.resetHubzillaCalls();
    const res = await fetch(new URL(scale2, t.url), { headers: { 'x-hubzilla-authorization': DEMO } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await res.arrayBuffer()).equals(expected)).toBe(true);
    expect(called()).toEqual([`photo?photo_id=${hash()}&scale=2`]);
    const part = await fetch(new URL(scale2, t.url), { headers: { 'x-hubzilla-authorization': DEMO, range: 'bytes=0-9' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-9/${expected.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(expected.subarray(0, 10))).toBe(true);
    const rest = await fetch(new URL(scale2, t.url), { headers: { 'x-hubzilla-authorization': DEMO, range: 'bytes=10-' } });
    expect(Buffer.from(await rest.arrayBuffer()).equals(expected.subarray(10))).toBe(true);
    // The ranges a viewer asks next are cut from the size read whole: no read of the photo per range.
    expect(called()).toEqual([`photo?photo_id=${hash()}&scale=2`]);
    // Another login reads for itself until the hub verified it as the same channel.
    await fetch(new URL(scale2, t.url), { headers: { 'x-hubzilla-authorization': basic('alice', 'alice-pass'), range: 'bytes=0-9' } }).then((r) =>
      r.arrayBuffer(),
    );
    expect(called()).toEqual([`photo?photo_id=${hash()}&scale=2`, `photo?photo_id=${hash()}&scale=2`]);
    const outside = await fetch(new URL(scale2, t.url), { headers: { 'x-hubzilla-authorization': DEMO, range: `bytes=${expected.length}-` } });
    expect(outside.status).toBe(416);
    await outside.arrayBuffer();
  });

  it('streams the original (scale 0) in chunks like any file', async () => {
    const res = await fetch(`${t.url.origin}/downloads/hubzilla/photos/${hash()}/0`, { headers: { 'x-hubzilla-authorization': DEMO } });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(await hubPhoto(0))).toBe(true);
    expect(called().filter((p) => p.startsWith('photo'))).toEqual([`photo?photo_id=${hash()}&scale=0`]);
    expect(called().some((p) => p.startsWith('filedata'))).toBe(true);
  });

  it('answers 404 for a scale the photo lacks, 400 for a scale that cannot exist, 401 without credentials', async () => {
    const missing = await fetch(`${t.url.origin}/downloads/hubzilla/photos/${hash()}/5`, { headers: { 'x-hubzilla-authorization': DEMO } });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as Data).errors[0].extensions.code).toBe('NOT_FOUND');
    t.resetHubzillaCalls();
    for (const path of [`${hash()}/9`, `${hash()}/x`, `${hash()}/1/2`, `${hash()}`, `4%25/1`]) {
      const bad = await fetch(`${t.url.origin}/downloads/hubzilla/photos/${path}`, { headers: { 'x-hubzilla-authorization': DEMO } });
      expect(bad.status, path).toBe(400);
      await bad.arrayBuffer();
    }
    expect(called()).toEqual([]);
    const anonymous = await fetch(`${t.url.origin}/downloads/hubzilla/photos/${hash()}/1`);
    expect(anonymous.status).toBe(401);
    await anonymous.arrayBuffer();
  });

  it('answers 502 with UPSTREAM_ERROR when the hub fails to serve a photo, and none of its words', async () => {
    t.hubzilla.addFault({ path: 'photo', status: 500, body: 'PHP Fatal error: secret path /var/www' });
    // Scale 3: one no test above read, so that no copy kept for 30 s answers instead of the hub.
    const res = await fetch(`${t.url.origin}/downloads/hubzilla/photos/${hash()}/3`, { headers: { 'x-hubzilla-authorization': DEMO } });
    expect(res.status).toBe(502);
    const body = await res.text();
    expect(JSON.parse(body).errors[0].extensions.code).toBe('UPSTREAM_ERROR');
    expect(body).not.toContain('/var/www');
  });
});

describe('export', () => {
  it("adds a month of wall posts with posts: true, to the hub's defaults or to the sections asked", async () => {
    const r = await hz('{ channel { all: export(posts: true) some: export(sections: [CHANNEL], posts: true) } }');
    expect(r.errors).toBeUndefined();
    expect(Array.isArray(r.data.channel.all.item)).toBe(true);
    expect(r.data.channel.all.abook).toBeDefined();
    expect(r.data.channel.some.abook).toBeUndefined();
    expect(Array.isArray(r.data.channel.some.item)).toBe(true);
    expect(called().sort()).toEqual(['channel/export/basic?sections=channel,connections,config,apps,items', 'channel/export/basic?sections=channel,items']);
  });
});

const POST = `mutation($input: ChannelItemPostInput!) { channelItemPost(input: $input) {
  item { restId uuid messageId title summary body mimetype categories verb objectType itemType createdAt author { address } flags { origin } }
  errors { message field code } } }`;

function post(input: Record<string, unknown>): Promise<GraphQLResponse<Data>> {
  return hz(POST, { input });
}

/** The form fields of the item/update calls since the last reset. */
function sentForms(): URLSearchParams[] {
  return t.hubzillaCalls({ path: 'item/update' }).map((c) => new URLSearchParams(c.body));
}

describe('item/update fields', () => {
  it('posts a like and a dislike on an item as activities', async () => {
    const parent = facts.wallThreadIds[0];
    const like = await post({ body: 'likes this', parentRestId: parent, activity: 'LIKE' });
    expect(like.data.channelItemPost.errors).toEqual([]);
    expect(like.data.channelItemPost.item.verb).toBe('http://activitystrea.ms/schema/1.0/like');
    const dislike = await post({ body: 'not for me', parentRestId: parent, activity: 'DISLIKE', objectType: 'NOTE' });
    expect(dislike.data.channelItemPost.item).toMatchObject({
      verb: 'http://purl.org/zot/activity/dislike',
      objectType: 'http://activitystrea.ms/schema/1.0/note',
    });
    expect(sentForms().map((f) => f.get('verb'))).toEqual(['http://activitystrea.ms/schema/1.0/like', 'http://purl.org/zot/activity/dislike']);
  });

  it('creates a web page with its name and layout', async () => {
    const r = await post({ body: '[h1]About[/h1]', webpage: { type: 'WEBPAGE', name: 'about', layoutMessageId: 'https://hub.duograph.test/item/layout-1' } });
    expect(r.data.channelItemPost.errors).toEqual([]);
    expect(r.data.channelItemPost.item.itemType).toBe(3);
    const form = sentForms()[0];
    expect([form?.get('webpage'), form?.get('pagetitle'), form?.get('layout_mid')]).toEqual(['3', 'about', 'https://hub.duograph.test/item/layout-1']);
  });

  it('imports an item with its own message id, time, author and origin, and edits it again by its remote id', async () => {
    const input = {
      body: 'imported from elsewhere',
      messageId: 'https://elsewhere.example/notes/42',
      createdAt: '2026-01-02T03:04:05Z',
      authorXchanHash: facts.aliceXchan,
      origin: false,
      remote: { namespace: 'elsewhere', remoteId: '42' },
    };
    const first = await post(input);
    expect(first.data.channelItemPost.errors).toEqual([]);
    // The hub keeps a sent message id as the item's uuid, under its own /item/ (what 8.8.7 and 10.x do alike).
    expect(first.data.channelItemPost.item).toMatchObject({
      uuid: 'https://elsewhere.example/notes/42',
      messageId: 'https://hub.duograph.test/item/https://elsewhere.example/notes/42',
      createdAt: '2026-01-02T03:04:05.000Z',
      author: { address: 'alice@hub.duograph.test' },
      flags: { origin: false },
    });
    const form = sentForms()[0];
    expect([form?.get('namespace'), form?.get('remote_id'), form?.get('remote_xchan'), form?.get('origin'), form?.get('created')]).toEqual([
      'elsewhere',
      '42',
      facts.aliceXchan,
      '0',
      '2026-01-02 03:04:05',
    ]);
    // The same namespace and remote id again edit the item it created.
    const again = await post({ body: 'imported, corrected', remote: { namespace: 'elsewhere', remoteId: '42' } });
    expect(again.data.channelItemPost.item.restId).toBe(first.data.channelItemPost.item.restId);
    expect(again.data.channelItemPost.item.body).toBe('imported, corrected');
  });

  it('refuses fields of a new item on an edit, and malformed ones, before any call', async () => {
    const r = await post({ restId: facts.wallThreadIds[0], body: 'x', activity: 'LIKE', webpage: { type: 'CARD', name: 'a b' } });
    expect(r.data.channelItemPost.errors.map((e: Data) => e.field)).toEqual([
      ['input', 'webpage'],
      ['input', 'activity'],
      ['input', 'webpage'],
    ]);
    const bad = await post({ body: 'x', authorXchanHash: "o'brien", messageId: ' ', remote: { namespace: '', remoteId: '1' } });
    expect(bad.data.channelItemPost.errors.map((e: Data) => e.field[1]).sort()).toEqual(['authorXchanHash', 'messageId', 'remote']);
    expect(t.hubzillaCalls()).toEqual([]);
  });
});

describe('what the hub does that a caller would not guess', () => {
  it('keeps title, summary, categories and media type on an edit that leaves them out: one read, then the edit', async () => {
    const created = await post({ body: 'first', title: 'Kept title', summary: 'spoilers', categories: ['a', 'b'], mimetype: 'text/markdown' });
    const restId = created.data.channelItemPost.item.restId;
    t.resetHubzillaCalls();
    const edited = await post({ restId, body: 'second' });
    expect(edited.data.channelItemPost.errors).toEqual([]);
    expect(edited.data.channelItemPost.item).toMatchObject({
      body: 'second',
      title: 'Kept title',
      summary: 'spoilers',
      categories: ['a', 'b'],
      mimetype: 'text/markdown',
      objectType: created.data.channelItemPost.item.objectType,
    });
    expect(called().filter((p) => !p.startsWith('xchan'))).toEqual([`item/full?item_id=${restId}`, 'item/update']);
    // Null clears, as the hub does with what an edit leaves out; a value given costs no read.
    t.resetHubzillaCalls();
    const cleared = await post({ restId, body: 'third', title: 'New title', summary: null, categories: [], mimetype: 'text/bbcode', objectType: 'NOTE' });
    expect(cleared.data.channelItemPost.item).toMatchObject({ title: 'New title', summary: '', categories: [], mimetype: 'text/bbcode' });
    expect(called().filter((p) => !p.startsWith('xchan'))).toEqual(['item/update']);
  });

  it('keeps a comment a comment on an edit, said or not: the hub sets the type of an edit from the form', async () => {
    const top = await post({ body: 'a thread' });
    const comment = await post({ body: 'a comment', parentRestId: top.data.channelItemPost.item.restId, objectType: 'COMMENT' });
    const restId = comment.data.channelItemPost.item.restId;
    const kept = await post({ restId, body: 'a comment, edited', objectType: 'COMMENT' });
    expect(kept.data.channelItemPost.item.objectType).toBe('http://activitystrea.ms/schema/1.0/comment');
    // A body-only edit: the hub would make the comment a note (as a real 8.8.7 hub does); item/full cannot read a comment by id,
    // so an item it does not find is sent as a comment.
    const bodyOnly = await post({ restId, body: 'a comment, edited again' });
    expect(bodyOnly.data.channelItemPost.errors).toEqual([]);
    expect(bodyOnly.data.channelItemPost.item.objectType).toMatch(/^(http:\/\/activitystrea\.ms\/schema\/1\.0\/comment|Comment)$/);
    const form = t.hubzillaCalls({ path: 'item/update' }).at(-1);
    expect(new URLSearchParams(form?.body).get('obj_type')).toBe('http://activitystrea.ms/schema/1.0/comment');
  });

  it('refuses allow and deny lists naming a group or connection the channel does not have, before writing', async () => {
    const unknownGroup = '00000000-0000-4000-8000-000000000000';
    const r = await post({
      body: 'private to nobody?',
      allowGroups: [facts.groups.Work?.hash, unknownGroup],
      denyGroups: [facts.groups.Archive?.hash],
      allowContacts: [facts.graceXchan],
    });
    expect(r.data.channelItemPost.item).toBeNull();
    const errors = r.data.channelItemPost.errors as Data[];
    expect(errors.map((e) => e.field[1])).toEqual(['allowGroups', 'denyGroups', 'allowContacts']);
    expect(errors[0].message).toContain(unknownGroup);
    expect(errors[0].message).not.toContain(facts.groups.Work?.hash);
    // A deleted group is unknown too; grace is a known identity but no connection.
    expect(errors.every((e) => e.code === 'INVALID')).toBe(true);
    expect(called().sort()).toEqual(['abook', 'group']);
  });
});
