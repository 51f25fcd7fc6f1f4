/**
 * The Hubzilla file route: filedata's base64 chunks become one binary
 * download with content type, Content-Length and Range, read in bounded
 * chunks one after another (constant memory), with the caller's credentials.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BIG_FILE_SIZE, seedFacts } from '../../src/sandbox/hubzilla/seed.js';
import { HUBZILLA_CHUNK_BYTES } from '../../src/server/hubzilla-downloads.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const facts = seedFacts();
const DEMO = `Basic ${Buffer.from('demo:demo-pass').toString('base64')}`;
let t: TestApp;

/** The file's bytes as the hub itself returns them (`file`, the whole file in one base64 string). */
async function hubBytes(hash: string): Promise<Buffer> {
  const res = await fetch(`${t.hubzilla.url}/api/z/1.0/file?file_id=${hash}`, { headers: { authorization: DEMO } });
  const body = (await res.json()) as { attach: { content: string } };
  return Buffer.from(body.attach.content, 'base64');
}

function download(hash: string, headers: Record<string, string> = {}, auth: string | null = DEMO, query = ''): Promise<Response> {
  return fetch(new URL(`/downloads/hubzilla/files/${hash}${query}`, t.url), { headers: { ...(auth ? { 'x-hubzilla-authorization': auth } : {}), ...headers } });
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

describe('Hubzilla file downloads', () => {
  it('streams a whole file with its content type and length', async () => {
    const hash = facts.files['report.pdf'] ?? '';
    const expected = await hubBytes(hash);
    t.resetHubzillaCalls();
    const res = await download(hash);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-length')).toBe('20000');
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''report.pdf");
    expect(Buffer.from(await res.arrayBuffer()).equals(expected)).toBe(true);
    expect(t.hubzillaCalls().map((c) => c.path.replace('/api/z/1.0/', ''))).toEqual(['filemeta', 'filedata']);
    expect(t.hubzillaCalls().every((c) => c.headers.authorization === DEMO && c.headers.cookie === undefined)).toBe(true);
  });

  it('serves a Range as 206 with Content-Range', async () => {
    const hash = facts.files['report.pdf'] ?? '';
    const expected = await hubBytes(hash);
    const res = await download(hash, { range: 'bytes=100-199' });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe('bytes 100-199/20000');
    expect(res.headers.get('content-length')).toBe('100');
    expect(Buffer.from(await res.arrayBuffer()).equals(expected.subarray(100, 200))).toBe(true);
    const suffix = await download(hash, { range: 'bytes=-10' });
    expect(suffix.headers.get('content-range')).toBe('bytes 19990-19999/20000');
    expect(Buffer.from(await suffix.arrayBuffer()).equals(expected.subarray(19990))).toBe(true);
  });

  it('answers an unsatisfiable range with 416', async () => {
    const res = await download(facts.files['report.pdf'] ?? '', { range: 'bytes=20000-' });
    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toBe('bytes */20000');
  });

  it('streams a 3 MB file in bounded chunks fetched one after another', async () => {
    const hash = facts.files['big-dataset.bin'] ?? '';
    const res = await download(hash);
    expect(res.headers.get('content-length')).toBe(String(BIG_FILE_SIZE));
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.length).toBe(BIG_FILE_SIZE);
    const chunks = t.hubzillaCalls({ path: 'filedata' });
    expect(chunks).toHaveLength(Math.ceil(BIG_FILE_SIZE / HUBZILLA_CHUNK_BYTES));
    expect(chunks.map((c) => Number(c.query.start?.[0]))).toEqual(chunks.map((_c, i) => i * HUBZILLA_CHUNK_BYTES));
    expect(chunks.every((c) => Number(c.query.length?.[0]) <= HUBZILLA_CHUNK_BYTES)).toBe(true);
    // Spot-check the bytes against the hub's own chunk at the end of the file.
    const tail = await fetch(`${t.hubzilla.url}/api/z/1.0/filedata?file_id=${hash}&start=${BIG_FILE_SIZE - 64}&length=64`, {
      headers: { authorization: DEMO },
    });
    const { attach } = (await tail.json()) as { attach: { content: string } };
    expect(bytes.subarray(BIG_FILE_SIZE - 64).equals(Buffer.from(attach.content, 'base64'))).toBe(true);
  });

  it('keeps the channel of ChannelFile.downloadUrl', async () => {
    const r = await t.gql<{ channel: { files: { nodes: { downloadUrl: string | null }[] } } }>(
      '{ channel(nickname: "demo-projects") { files { nodes { downloadUrl } } } }',
      {},
      { headers: { 'x-hubzilla-authorization': DEMO } },
    );
    expect(r.data?.channel.files.nodes).toEqual([]);
    const res = await download(facts.files['notes.txt'] ?? '', {}, DEMO, '?channel=demo-projects');
    expect(res.status).toBe(404);
    expect(t.hubzillaCalls({ path: 'filemeta' }).at(-1)?.query.channel).toEqual(['demo-projects']);
  });

  it('answers 404 for an unknown file or a folder, 400 for a bad hash, 401 without credentials', async () => {
    expect((await download('00000000-0000-0000-0000-000000000000')).status).toBe(404);
    expect((await download(facts.folders.Documents ?? '')).status).toBe(404);
    expect((await download('abc%25')).status).toBe(400);
    const noAuth = await download(facts.files['notes.txt'] ?? '', {}, null);
    expect(noAuth.status).toBe(401);
    expect(await noAuth.json()).toMatchObject({ errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] });
    const colon = await download(facts.files['notes.txt'] ?? '', {}, `Basic ${Buffer.from('colontest:pa:ss-word').toString('base64')}`);
    expect(colon.status).toBe(400);
  });

  it('breaks the response off when the hub fails mid-stream', async () => {
    const hash = facts.files['big-dataset.bin'] ?? '';
    let served = 0;
    // Each hub answer takes 50 ms, so the fault below is in place before the second chunk is asked for.
    t.hubzilla.setLatency(50);
    const res = await download(hash);
    expect(res.status).toBe(200);
    t.hubzilla.addFault({ path: 'filedata', status: 500, body: '' });
    await expect(
      (async () => {
        const reader = res.body?.getReader();
        for (;;) {
          const chunk = await reader?.read();
          if (!chunk || chunk.done) break;
          served += chunk.value.length;
        }
      })(),
    ).rejects.toThrow();
    t.hubzilla.setLatency(0);
    expect(served).toBeLessThan(BIG_FILE_SIZE);
  });

  it('refuses other methods', async () => {
    const res = await fetch(new URL(`/downloads/hubzilla/files/${facts.files['notes.txt']}`, t.url), {
      method: 'POST',
      headers: { 'x-hubzilla-authorization': DEMO },
    });
    expect(res.status).toBe(405);
  });
});
