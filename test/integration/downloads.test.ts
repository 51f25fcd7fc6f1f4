import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
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

  it('streams a 200 MB artifact with constant memory: the gateway process alone grows by less than 64 MB', async () => {
    // The gateway runs as the operator runs it, in a process of its own, so its RSS is its own:
    // the sandbox (the upstream) and this test (the client) are other processes.
    const child = spawn(process.execPath, ['dist/src/main.js', 'serve', '--port', '0', '--host', '127.0.0.1'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, GITLAB_URL: t.sandbox.url, HUBZILLA_URL: t.hubzilla.url, LOG_LEVEL: 'warn', LOG_FILE: '' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout?.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const match = /GraphiQL at (\S+)/.exec(out);
          if (match) resolve(match[1] ?? '');
        });
        child.once('exit', (code) => reject(new Error(`the gateway exited with ${code}: ${out}`)));
      });
      const rss = async () => Number(/^VmRSS:\s+(\d+) kB/m.exec(await readFile(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
      // Warm: the route's first use loads and compiles its code.
      await (await fetch(new URL('/downloads/gitlab/projects/1/jobs/1002/trace', url), { headers: { 'private-token': 'demo-token' } })).text();
      const before = await rss();
      let peak = before;
      const sampler = setInterval(
        () =>
          void rss().then(
            (now) => (peak = Math.max(peak, now)),
            () => undefined,
          ),
        20,
      );
      const response = await fetch(new URL('/downloads/gitlab/projects/1/jobs/1007/artifacts', url), { headers: { 'private-token': 'demo-token' } });
      expect(response.status).toBe(200);
      let received = 0;
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        received += value.byteLength;
      }
      clearInterval(sampler);
      peak = Math.max(peak, await rss());
      expect(received).toBeGreaterThan(LARGE);
      expect(Number(response.headers.get('content-length'))).toBe(received);
      expect(peak - before).toBeLessThan(64 * 1024 * 1024);
    } finally {
      child.kill('SIGTERM');
    }
  }, 60_000);
});
