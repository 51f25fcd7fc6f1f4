/**
 * Rules a real hub plays on writes, played by the sandbox as the hub's code
 * does, and what the gateway makes of them:
 *
 * - suppress_duplicates (on by default, include/features.php): in
 *   Zotlabs/Module/Item.php a new item whose body equals that of any item of
 *   the channel created in the last two minutes is answered `operation
 *   cancelled`, before item_store() looks at its uuid. A retry with the same
 *   messageId answers with the item stored before, whatever the hub said.
 * - collect_recipients() (include/items.php) hands an audience that resolved
 *   to nobody to deliverable_abook_xchans() (include/connections.php), which
 *   reads an empty list as every connection: the gateway refuses such an
 *   item before the hub sees it.
 *
 * Run on 8.8 and 10 (vitest.config.ts): 10.x's Zotlabs/Module/Item.php
 * keeps the same duplicate check, word for word; its include/items.php was
 * not readable, so its delivery is assumed to match 8.8's.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { seedFacts } from '../../src/sandbox/hubzilla/seed.js';
import { createTestApp, type GraphQLResponse, type TestApp } from '../helpers/app.js';

const DEMO = `Basic ${Buffer.from('demo:demo-pass').toString('base64')}`;
const ALICE = `Basic ${Buffer.from('alice:alice-pass').toString('base64')}`;

// biome-ignore lint/suspicious/noExplicitAny: results are read by path, as a client reads JSON.
type Data = any;

const POST = `mutation($input: ChannelItemPostInput!) { channelItemPost(input: $input) {
  item { restId uuid messageId body isComment } errors { message field code } } }`;

const facts = seedFacts();
let t: TestApp;

function hz(query: string, variables: Record<string, unknown> = {}, auth = DEMO): Promise<GraphQLResponse<Data>> {
  return t.gql<Data>(query, variables, { headers: { 'x-hubzilla-authorization': auth } });
}

async function post(input: Record<string, unknown>, auth = DEMO): Promise<Data> {
  const r = await hz(POST, { input }, auth);
  expect(r.errors).toBeUndefined();
  return r.data.channelItemPost;
}

/** item/update straight to the sandbox, as a form: what the hub answers. */
async function hubPost(form: Record<string, string | string[]>, auth = DEMO): Promise<Data> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) for (const one of [v].flat()) body.append(k, one);
  const res = await fetch(`${t.hubzilla.url}/api/z/1.0/item/update`, { method: 'POST', headers: { authorization: auth }, body });
  return res.json();
}

async function networkStreamOf(auth: string): Promise<{ body: string; mid: string; author: { url: string } }[]> {
  const res = await fetch(`${t.hubzilla.url}/api/z/1.0/network/stream?records=50`, { headers: { authorization: auth } });
  return res.json() as Promise<{ body: string; mid: string; author: { url: string } }[]>;
}

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});
beforeEach(() => {
  // Each test starts outside the window of the texts posted before it.
  t.hubzilla.advanceClock(121);
  t.hubzilla.clearFaults();
  t.resetHubzillaCalls();
});

describe('the sandbox plays the hub', () => {
  it('cancels an identical body within two minutes, comments and received copies included, and takes it after (Item.php, suppress_duplicates)', async () => {
    expect(await hubPost({ body: 'same words', message_id: 'dup-a' })).toMatchObject({ success: true });
    expect(await hubPost({ body: 'same words', message_id: 'dup-b' })).toEqual({ success: false, message: 'operation cancelled' });
    // A comment with that body on another thread: cancelled as well.
    expect(await hubPost({ body: 'same words', parent: String(facts.wallThreadIds[0]) })).toEqual({ success: false, message: 'operation cancelled' });
    // alice received the post (delivery.ts): her own post of the same words is cancelled too.
    expect(await hubPost({ body: 'same words' }, ALICE)).toEqual({ success: false, message: 'operation cancelled' });
    t.hubzilla.advanceClock(121);
    expect(await hubPost({ body: 'same words', message_id: 'dup-c' })).toMatchObject({ success: true });
    // Within the window, the same message id is cancelled before item_store() would say "system error".
    expect(await hubPost({ body: 'other words', message_id: 'dup-c' })).toMatchObject({ success: false, message: 'system error' });
  });

  it('delivers a post for an empty group to every connection (collect_recipients, deliverable_abook_xchans)', async () => {
    const empty = facts.groups.Empty?.hash ?? '';
    const stored = await hubPost({ body: 'meant for nobody', 'group_allow[]': [empty] });
    expect(stored).toMatchObject({ success: true, item: { item_private: 1 } });
    const alices = await networkStreamOf(ALICE);
    expect(alices.find((i) => i.body === 'meant for nobody')).toBeDefined();
    // A post for a group alice is not in, with members who are connections, does not reach her.
    const friendsOnlyBob = await hubPost({ body: 'for bob alone', 'contact_allow[]': [facts.bobXchan] });
    expect(friendsOnlyBob).toMatchObject({ success: true });
    expect((await networkStreamOf(ALICE)).find((i) => i.body === 'for bob alone')).toBeUndefined();
  });
});

describe('retries inside the duplicate window', () => {
  it('answers a repeated post, comment and reply to a reply with the item stored before', async () => {
    const top = await post({ body: 'retried post', messageId: 'rule-post' });
    expect(top.errors).toEqual([]);
    expect(await post({ body: 'retried post', messageId: 'rule-post' })).toEqual(top);
    const parentRestId = top.item.restId;
    const comment = await post({ body: 'retried comment', parentRestId, messageId: 'rule-comment' });
    expect(comment.errors).toEqual([]);
    expect(await post({ body: 'retried comment', parentRestId, messageId: 'rule-comment' })).toEqual(comment);
    const byMid = await post({ body: 'retried by mid', parentMessageId: top.item.messageId, messageId: 'rule-by-mid' });
    expect(await post({ body: 'retried by mid', parentMessageId: top.item.messageId, messageId: 'rule-by-mid' })).toEqual(byMid);
    // A reply to a reply: item/full cannot name the thread by the reply's id; the newest threads can.
    const reply = await post({ body: 'a reply to a reply', parentRestId: comment.item.restId, messageId: 'rule-reply' });
    expect(reply.errors).toEqual([]);
    const again = await post({ body: 'a reply to a reply', parentRestId: comment.item.restId, messageId: 'rule-reply' });
    expect(again).toEqual(reply);
    // And after the window, where the hub says "system error" instead.
    t.hubzilla.advanceClock(121);
    expect(await post({ body: 'a reply to a reply', parentRestId: comment.item.restId, messageId: 'rule-reply' })).toEqual(reply);
  });

  it('says why an identical text without a repeated messageId is refused', async () => {
    expect((await post({ body: '+1' })).errors).toEqual([]);
    const second = await post({ body: '+1', parentRestId: facts.wallThreadIds[1] });
    expect(second).toEqual({
      item: null,
      errors: [{ message: expect.stringContaining('last two minutes'), field: ['input', 'body'], code: 'CONFLICT' }],
    });
  });

  it('does not read a "system error" as a taken messageId when the caller sent none', async () => {
    t.hubzilla.addFault({
      path: /item\/update/,
      status: 200,
      body: '{"success":false,"message":"system error"}',
      headers: { 'content-type': 'application/json' },
    });
    const r = await post({ body: 'a comment the hub will not store', parentRestId: facts.wallThreadIds[2] });
    expect(r.item).toBeNull();
    expect(r.errors).toEqual([{ message: expect.stringMatching(/^Hubzilla refused the item: system error/), field: [], code: 'INVALID' }]);
  });

  it("refuses the messageId of an item the channel received instead of answering with another author's item", async () => {
    const demo = await post({ body: 'from demo to alice', messageId: 'rule-received' });
    expect(demo.errors).toEqual([]);
    t.hubzilla.advanceClock(121);
    const alice = await post({ body: 'alice reusing the id', messageId: 'rule-received' }, ALICE);
    expect(alice).toEqual({
      item: null,
      errors: [{ message: expect.stringContaining('another item this channel holds'), field: ['input', 'messageId'], code: 'TAKEN' }],
    });
  });
});

describe('private stays private', () => {
  const calledUpdate = () => t.hubzillaCalls({ path: 'item/update' });

  it('refuses an item for an empty group, for members who are no connections, and for an audience all denied, before the hub sees it', async () => {
    for (const input of [
      { allowGroups: [facts.groups.Empty?.hash] },
      // Family: erin is pending, grace no connection.
      { allowGroups: [facts.groups.Family?.hash] },
      { allowGroups: [facts.groups.Work?.hash], denyGroups: [facts.groups.Work?.hash] },
    ]) {
      const r = await post({ body: `private? ${JSON.stringify(input)}`, ...input });
      expect(r.item).toBeNull();
      expect(r.errors).toEqual([{ message: expect.stringContaining('every connection'), field: ['input', 'allowGroups'], code: 'INVALID' }]);
    }
    expect(calledUpdate()).toEqual([]);
  });

  it('sends an item whose audience has a connection', async () => {
    const r = await post({ body: 'for the Work group', allowGroups: [facts.groups.Work?.hash] });
    expect(r.errors).toEqual([]);
    expect(calledUpdate()).toHaveLength(1);
  });
});

describe('a withdrawn login stops reading', () => {
  let clock = Date.parse('2026-11-29T12:00:00Z');
  let app: TestApp;
  beforeAll(async () => {
    app = await createTestApp({ app: { now: () => clock }, env: { CACHE_MAX_AGE_MS: '5000' } });
  });
  afterAll(async () => {
    await app.close();
  });

  // `name` asks verify (never stored): the login is verified and then shares the channel's stored stream.
  const FIRST = '{ channel { name networkStream(first: 3) { nodes { body } } } }';
  const READ = '{ channel { networkStream(first: 3) { nodes { body } } } }';
  const read = (auth: string, query = READ) => app.gql<Data>(query, {}, { headers: { 'x-hubzilla-authorization': auth } });

  async function token(): Promise<string> {
    const { OAUTH_CLIENT } = await import('../../src/sandbox/hubzilla/seed.js');
    const res = await fetch(`${app.hubzilla.url}/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${OAUTH_CLIENT.clientId}:${OAUTH_CLIENT.clientSecret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
    });
    return `Bearer ${((await res.json()) as { access_token: string }).access_token}`;
  }

  it('is verified again once its last verify is 10 s old, while another login of the channel keeps the answers warm', async () => {
    const bearer = await token();
    expect((await read(bearer, FIRST)).errors).toBeUndefined();
    expect((await read(DEMO, FIRST)).errors).toBeUndefined();
    // Both verified: this answer is stored for the channel, shared by its logins.
    expect((await read(DEMO)).errors).toBeUndefined();
    app.hubzilla.revokeTokens();
    // Within 10 s the revoked login still shares what the channel's logins keep (the documented bound).
    clock += 4_000;
    app.resetHubzillaCalls();
    expect((await read(bearer)).errors).toBeUndefined();
    expect(app.hubzillaCalls()).toEqual([]);
    // Past it, its next read verifies it first: the hub says 401, and nothing stored is served.
    clock += 7_000;
    expect((await read(DEMO)).errors).toBeUndefined();
    app.resetHubzillaCalls();
    const refused = await read(bearer);
    expect(refused.data?.channel?.networkStream ?? null).toBeNull();
    expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(app.hubzillaCalls().map((c) => c.path)).toEqual(['/api/z/1.0/verify']);
  });

  it('serves nothing stored to a stale login whose verify the hub fails, and says the hub failed', async () => {
    expect((await read(DEMO, FIRST)).errors).toBeUndefined();
    expect((await read(DEMO)).errors).toBeUndefined();
    clock += 11_000;
    app.hubzilla.addFault({ path: /\/verify$/, status: 500, body: '' });
    const failed = await read(DEMO);
    expect(failed.data?.channel?.networkStream ?? null).toBeNull();
    expect(failed.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    app.hubzilla.clearFaults();
    // Not a refusal: once the hub answers again, the login is verified and reads as before.
    expect((await read(DEMO)).errors).toBeUndefined();
  });

  it('ends sharing at once on a 401, inside the 10 s', async () => {
    const bearer = await token();
    // The token login is verified; the stream it will ask for is stored by the password login only.
    expect((await read(bearer, '{ channel { name } }')).errors).toBeUndefined();
    expect((await read(DEMO, FIRST)).errors).toBeUndefined();
    expect((await read(DEMO)).errors).toBeUndefined();
    app.hubzilla.revokeTokens();
    clock += 1_000;
    // A read nobody stored reaches the hub and gets its 401 ...
    const files = await app.gql<Data>(
      '{ channel(nickname: "demo") { files(first: 1) { totalCount } } }',
      {},
      { headers: { 'x-hubzilla-authorization': bearer } },
    );
    expect(files.errors?.[0]?.extensions?.code, JSON.stringify(files)).toBe('UNAUTHENTICATED');
    // ... and the warm answers of the channel are no longer this login's.
    const warm = await read(bearer);
    expect(warm.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe('stream past the hub’s 201 threads', () => {
  it('reads on from the last thread’s time, so the newest threads are there (zot_feed() keeps the 201 oldest)', async () => {
    // demo-projects has 3 wall threads; 250 more (the sandbox's clock moves a second per item).
    const projects = `Basic ${Buffer.from('demo@example.com:demo-pass').toString('base64')}`;
    for (let i = 0; i < 250; i++) {
      const r = await fetch(`${t.hubzilla.url}/api/z/1.0/item/update?channel=demo-projects`, {
        method: 'POST',
        headers: { authorization: projects },
        body: new URLSearchParams({ body: `thread number ${i}`, channel: 'demo-projects' }),
      });
      expect(((await r.json()) as { success: boolean }).success).toBe(true);
    }
    t.resetHubzillaCalls();
    const r = await hz('{ channel(nickname: "demo-projects") { stream(last: 3) { totalCount cut nodes { body } } } }');
    expect(r.errors).toBeUndefined();
    expect(r.data.channel.stream.nodes.map((n: Data) => n.body)).toEqual(['thread number 247', 'thread number 248', 'thread number 249']);
    expect(r.data.channel.stream.totalCount).toBe(253);
    expect(r.data.channel.stream.cut).toBe(false);
    expect(t.hubzillaCalls({ path: 'channel/stream' })).toHaveLength(2);
  });
});
