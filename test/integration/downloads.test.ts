import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
const LARGE = 200 * 1024 * 1024;

beforeAll(async () => {
  t = await createTestApp({ sandbox: { clock: 'manual', largeArtifactBytes: LARGE } });
});

afterAll(async () => {
  await t.close();
});

const get = (path: string, headers: Record<string, string> = { 'private-token': 'demo-token' }) => fetch(new URL(path, t.url), { headers });

/** The file names of a zip, read from its central directory. */
function zipEntries(zip: Buffer): string[] {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(end + 10);
  let offset = zip.readUInt32LE(end + 16);
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const nameLength = zip.readUInt16LE(offset + 28);
    const extra = zip.readUInt16LE(offset + 30);
    const comment = zip.readUInt16LE(offset + 32);
    names.push(zip.subarray(offset + 46, offset + 46 + nameLength).toString('utf8'));
    offset += 46 + nameLength + extra + comment;
  }
  return names;
}

describe('binary routes', () => {
  it("streams a job log with the caller's credentials", async () => {
    t.resetCalls();
    const response = await get('/downloads/gitlab/projects/1/jobs/1002/trace');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/plain/);
    expect((await response.text()).length).toBeGreaterThan(0);
    expect(t.calls()[0]).toMatchObject({ method: 'GET', path: '/api/v4/projects/1/jobs/1002/trace', headers: { 'private-token': 'demo-token' } });
  });

  it('streams an artifacts archive and one file inside it', async () => {
    const archive = await get('/downloads/gitlab/projects/1/jobs/1001/artifacts');
    expect(archive.status).toBe(200);
    expect(archive.headers.get('content-type')).toMatch(/zip/);
    const names = zipEntries(Buffer.from(await archive.arrayBuffer()));
    expect(names.length).toBeGreaterThan(0);
    const file = names.find((n) => !n.endsWith('/')) ?? '';
    const one = await get(`/downloads/gitlab/projects/1/jobs/1001/artifacts/${file.split('/').map(encodeURIComponent).join('/')}`);
    expect(one.status).toBe(200);
    expect((await one.arrayBuffer()).byteLength).toBeGreaterThan(0);
  });

  it('streams the latest artifacts of a ref and job name', async () => {
    const archive = await get('/downloads/gitlab/projects/1/jobs/artifacts/main/download?job=build');
    expect(archive.status).toBe(200);
    const names = zipEntries(Buffer.from(await archive.arrayBuffer()));
    const file = names.find((n) => !n.endsWith('/')) ?? '';
    const raw = await get(`/downloads/gitlab/projects/1/jobs/artifacts/main/raw/${file}?job=build`);
    expect(raw.status).toBe(200);
  });

  it("passes GitLab's 404 and 400 through unchanged", async () => {
    const missing = await get('/downloads/gitlab/projects/1/jobs/999999/trace');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ message: expect.stringMatching(/404/) });
    const traversal = await get('/downloads/gitlab/projects/1/jobs/1001/artifacts/..%2F..%2Fetc%2Fpasswd');
    expect([400, 404]).toContain(traversal.status);
  });

  it('streams the repository snapshot to an admin, and passes the 403 to others', async () => {
    const admin = await get('/downloads/gitlab/projects/1/snapshot', { 'private-token': 'admin-token' });
    expect(admin.status).toBe(200);
    expect(admin.headers.get('content-type')).toMatch(/tar/);
    await admin.arrayBuffer();
    const demo = await get('/downloads/gitlab/projects/1/snapshot');
    expect(demo.status).toBe(403);
    await demo.arrayBuffer();
  });

  it('refuses paths outside the download routes without calling GitLab', async () => {
    t.resetCalls();
    for (const path of ['/downloads/gitlab/projects/1/hooks', '/downloads/gitlab/users/1', '/downloads/gitlab/projects/1/jobs/abc/trace']) {
      expect((await get(path)).status).toBe(404);
    }
    expect(t.calls()).toHaveLength(0);
  });

  it('streams a 200 MB artifact with constant memory', async () => {
    const before = process.memoryUsage().rss;
    let peak = before;
    const response = await get('/downloads/gitlab/projects/1/jobs/1007/artifacts');
    expect(response.status).toBe(200);
    let received = 0;
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.byteLength;
      if ((received & 0xfffff) < value.byteLength) peak = Math.max(peak, process.memoryUsage().rss);
    }
    expect(received).toBeGreaterThan(LARGE);
    expect(Number(response.headers.get('content-length'))).toBe(received);
    // The gateway, the sandbox and the test run in this one process: all of them together stay far below the file size.
    expect(peak - before).toBeLessThan(64 * 1024 * 1024);
  }, 60_000);
});
