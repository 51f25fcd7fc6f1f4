/**
 * channelItemPost over real HTTP: create, comment, edit, ACLs, media upload
 * (GraphQL multipart request), user errors and upstream failures, and what
 * exactly the gateway sends to item/update.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makePng } from '../../src/sandbox/hubzilla/images.js';
import { seedFacts } from '../../src/sandbox/hubzilla/seed.js';
import { createTestApp, hubzillaVersion, type GraphQLResponse, type TestApp } from '../helpers/app.js';

const facts = seedFacts();
const DEMO = `Basic ${Buffer.from('demo:demo-pass').toString('base64')}`;

// biome-ignore lint/suspicious/noExplicitAny: results are read by path, as a client reads JSON.
type Data = any;

const POST = `mutation($input: ChannelItemPostInput!) { channelItemPost(input: $input) {
  item { restId body text images { url link name } title app location coordinates permalink categories allowContacts allowGroups isComment expiresAt
    flags { private noComment } parent { restId } author { address } attachments { title type } }
  errors { message field code } } }`;

let t: TestApp;

function post(input: Record<string, unknown>): Promise<GraphQLResponse<Data>> {
  return t.gql<Data>(POST, { input }, { headers: { 'x-hubzilla-authorization': DEMO } });
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

describe('channelItemPost', () => {
  it('creates a post as a form with source, permalink, categories and repeated ACL fields', async () => {
    const r = await post({
      body: 'hello from the gateway',
      title: 'Gateway post',
      app: 'duograph',
      permalink: 'https://example.org/p/1',
      categories: ['news', 'release'],
      location: 'Porto',
      coordinates: '41.15 -8.61',
      allowContacts: [facts.aliceXchan, facts.bobXchan],
      allowGroups: [facts.groups.Work?.hash],
      expiresAt: '2027-06-01T00:00:00Z',
      commentsDisabled: true,
    });
    expect(r.errors).toBeUndefined();
    const { item, errors } = r.data.channelItemPost;
    expect(errors).toEqual([]);
    expect(item).toMatchObject({
      body: 'hello from the gateway',
      title: 'Gateway post',
      app: 'duograph',
      permalink: 'https://example.org/p/1',
      categories: ['news', 'release'],
      location: 'Porto',
      coordinates: '41.15 -8.61',
      allowContacts: [facts.aliceXchan, facts.bobXchan],
      allowGroups: [facts.groups.Work?.hash],
      isComment: false,
      flags: { private: true, noComment: true },
      author: { address: 'demo@hub.duograph.test' },
    });
    const [sent] = t.hubzillaCalls({ path: 'item/update' });
    expect(sent?.method).toBe('POST');
    expect(sent?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(sent?.headers.cookie).toBeUndefined();
    const form = new URLSearchParams(sent?.body);
    expect(form.getAll('contact_allow[]')).toEqual([facts.aliceXchan, facts.bobXchan]);
    expect(form.getAll('group_allow[]')).toEqual([facts.groups.Work?.hash]);
    expect(form.get('source')).toBe('duograph');
    expect(form.get('permalink')).toBe('https://example.org/p/1');
    expect(form.has('app')).toBe(false);
    expect(form.has('plink')).toBe(false);
    expect(form.get('category')).toBe('news,release');
    expect(form.get('coord')).toBe('41.15 -8.61');
    expect(form.get('expire')).toBe('2027-06-01 00:00:00');
    expect(form.get('nocomment')).toBe('1');
    // The author comes from the row's author_xchan: one lookup.
    expect(t.hubzillaCalls({ path: 'xchan' })).toHaveLength(1);
  });

  it('comments on an item by id and by message id', async () => {
    const r = await post({ body: 'a comment', parentRestId: 1 });
    expect(r.data.channelItemPost.item).toMatchObject({ isComment: true, parent: { restId: 1 } });
    expect(new URLSearchParams(t.hubzillaCalls({ path: 'item/update' })[0]?.body).get('parent')).toBe('1');
    const top = await t.gql<Data>('{ channel { item(restId: 1) { messageId } } }', {}, { headers: { 'x-hubzilla-authorization': DEMO } });
    const byMid = await post({ body: 'another comment', parentMessageId: top.data.channel.item.messageId });
    expect(byMid.data.channelItemPost.item).toMatchObject({ isComment: true, parent: { restId: 1 } });
  });

  it('edits an item by id', async () => {
    const created = await post({ body: 'draft' });
    const id = created.data.channelItemPost.item.restId;
    const r = await post({ restId: id, body: 'final' });
    expect(r.data.channelItemPost).toMatchObject({ item: { restId: id, body: 'final' }, errors: [] });
    expect(new URLSearchParams(t.hubzillaCalls({ path: 'item/update' })[1]?.body).get('post_id')).toBe(String(id));
  });

  it('posts in another channel of the account', async () => {
    const r = await post({ channel: 'demo-projects', body: 'project news' });
    expect(r.data.channelItemPost.item.author.address).toBe('demo-projects@hub.duograph.test');
    expect(new URLSearchParams(t.hubzillaCalls({ path: 'item/update' })[0]?.body).get('channel')).toBe('demo-projects');
  });

  it('refuses a channel that is no nickname, or not of this account, as payload errors before anything is written', async () => {
    const bad = await post({ channel: 'bad nick!', body: 'x' });
    expect(bad.errors).toBeUndefined();
    expect(bad.data.channelItemPost).toEqual({
      item: null,
      errors: [{ message: '"bad nick!" is not a channel nickname.', field: ['input', 'channel'], code: 'INVALID' }],
    });
    expect(t.hubzillaCalls()).toHaveLength(0);
    const other = await post({ channel: 'alice', body: 'x' });
    expect(other.errors).toBeUndefined();
    expect(other.data.channelItemPost).toEqual({
      item: null,
      errors: [{ message: '"alice" is not a channel of this login\'s account.', field: ['input', 'channel'], code: 'FORBIDDEN' }],
    });
    expect(t.hubzillaCalls().map((c) => c.path)).toEqual(['/api/z/1.0/channel/list']);
    // The account's own channel, in any case, as the hub matches it.
    const own = await post({ channel: 'Demo-Projects', body: 'project news, again' });
    expect(own.data.channelItemPost.item.author.address).toBe('demo-projects@hub.duograph.test');
  });

  it('uploads media through the GraphQL multipart request spec as a multipart item/update', async () => {
    const png = makePng(8, 8, [10, 20, 30]);
    const form = new FormData();
    form.append('operations', JSON.stringify({ query: POST, variables: { input: { body: 'with a picture', title: 'Pic', media: null } } }));
    form.append('map', JSON.stringify({ 0: ['variables.input.media'] }));
    form.append('0', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'pic.png');
    const response = await fetch(t.url, { method: 'POST', headers: { 'x-hubzilla-authorization': DEMO, 'x-graphql-yoga-csrf': '1' }, body: form });
    const r = (await response.json()) as GraphQLResponse<Data>;
    expect(r.errors).toBeUndefined();
    // 8.8 appends the photo's link to the body, 10.x puts it first: text and images read the same on both.
    const item = r.data?.channelItemPost.item;
    expect(item?.body).toMatch(hubzillaVersion() === '10' ? /^\[zrl=[\s\S]*\[zmg[\s\S]*\n\nwith a picture$/ : /^with a picture\n+\[zrl=[\s\S]*\[zmg/);
    expect(item?.text).toBe('with a picture');
    expect(item?.images).toEqual([
      {
        url: expect.stringMatching(/^https:\/\/hub\.duograph\.test\/photo\/[\w-]+-2\.png$/),
        link: expect.stringMatching(/\/photos\/demo\/image\//),
        name: 'pic.png',
      },
    ]);
    const [sent] = t.hubzillaCalls({ path: 'item/update' });
    expect(sent?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(sent?.body).toContain('name="media"; filename="pic.png"');
    expect(sent?.body).toContain('name="title"');
    expect(Buffer.from(sent?.body ?? '', 'latin1').includes(png)).toBe(true);
  });

  it('shows an attachment title as it was named, which the hub stores form-encoded', async () => {
    const form = new FormData();
    form.append('operations', JSON.stringify({ query: POST, variables: { input: { body: 'a résumé', media: null } } }));
    form.append('map', JSON.stringify({ 0: ['variables.input.media'] }));
    form.append('0', new Blob(['cv\n'], { type: 'text/plain' }), 'résumé ü.txt');
    const response = await fetch(t.url, { method: 'POST', headers: { 'x-hubzilla-authorization': DEMO, 'x-graphql-yoga-csrf': '1' }, body: form });
    const r = (await response.json()) as GraphQLResponse<Data>;
    expect(r.errors).toBeUndefined();
    expect(r.data?.channelItemPost.item.attachments).toEqual([{ title: 'résumé ü.txt', type: 'text/plain' }]);
    // The hub's own record holds the encoded form.
    const raw = await fetch(`${t.hubzilla.url}/api/z/1.0/item/full?item_id=${r.data?.channelItemPost.item.restId}`, { headers: { authorization: DEMO } });
    expect(await raw.text()).toContain('r%C3%A9sum%C3%A9+%C3%BC.txt');
  });

  it('returns the edit of an item the channel does not have as a user error on restId', async () => {
    const r = await post({ restId: 999_999, body: 'edited' });
    expect(r.errors).toBeUndefined();
    expect(r.data?.channelItemPost).toEqual({
      item: null,
      errors: [{ message: 'Hubzilla has no item with that id to edit in this channel.', field: ['input', 'restId'], code: 'INVALID' }],
    });
  });

  it('attaches a non-image file', async () => {
    const form = new FormData();
    form.append('operations', JSON.stringify({ query: POST, variables: { input: { body: 'notes attached', media: null } } }));
    form.append('map', JSON.stringify({ 0: ['variables.input.media'] }));
    form.append('0', new Blob(['some notes\n'], { type: 'text/plain' }), 'notes.txt');
    const response = await fetch(t.url, { method: 'POST', headers: { 'x-hubzilla-authorization': DEMO, 'x-graphql-yoga-csrf': '1' }, body: form });
    const r = (await response.json()) as GraphQLResponse<Data>;
    expect(r.data?.channelItemPost.item.attachments).toEqual([{ title: 'notes.txt', type: 'text/plain' }]);
  });

  it('returns user errors for bad input without calling Hubzilla', async () => {
    const r = await post({ body: '  ', parentRestId: 1, parentMessageId: 'x', allowContacts: ["o'brien"], categories: ['a,b'] });
    expect(r.data.channelItemPost.item).toBeNull();
    expect(r.data.channelItemPost.errors.map((e: Data) => [e.field.join('.'), e.code])).toEqual([
      ['input.body', 'MISSING'],
      ['input.parentRestId', 'INVALID'],
      ['input.allowContacts', 'INVALID'],
      ['input.categories', 'INVALID'],
    ]);
    expect(t.hubzillaCalls()).toEqual([]);
  });

  it('turns the hub\'s {"success":false} for a bad parent into a user error', async () => {
    const r = await post({ body: 'orphan', parentRestId: 9999 });
    expect(r.data.channelItemPost).toEqual({
      item: null,
      errors: [{ message: 'Hubzilla refused the item: invalid post id.', field: ['input', 'parentRestId'], code: 'INVALID' }],
    });
  });

  it('maps an upstream failure to a top-level error and never retries the POST', async () => {
    t.hubzilla.addFault({ path: 'item/update', status: 500 });
    const r = await post({ body: 'x' });
    expect(r.data.channelItemPost).toBeNull();
    expect(r.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    expect(t.hubzillaCalls({ path: 'item/update' })).toHaveLength(1);
  });

  it('maps a wrong password to UNAUTHENTICATED', async () => {
    const r = await t.gql<Data>(
      POST,
      { input: { body: 'x' } },
      { headers: { 'x-hubzilla-authorization': `Basic ${Buffer.from('demo:nope').toString('base64')}` } },
    );
    expect(r.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
