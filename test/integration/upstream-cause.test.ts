/**
 * A GitLab that cannot be reached is logged with the cause, in the system's
 * words (refused, DNS, TLS, timeout), on the call's debug line: never only
 * "could not be reached".
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

const dir = mkdtempSync(join(tmpdir(), 'duograph-cause-'));
const file = join(dir, 'gateway.log');
let t: TestApp;

beforeAll(async () => {
  // Port 9 (discard) of the loopback: nothing listens, the connection is refused.
  t = await createTestApp({ gitlabUrl: new URL('http://127.0.0.1:9'), env: { LOG_FILE: file, LOG_LEVEL: 'debug', UPSTREAM_RETRIES: '0' } });
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

it('logs why GitLab could not be reached: the connection was refused', async () => {
  const res = await t.gql('{ project(id: "7") { name } }');
  expect(res.errors?.[0]).toMatchObject({
    message: 'GitLab could not be reached (connection refused): check GITLAB_URL, or retry later.',
    extensions: { code: 'UPSTREAM_UNAVAILABLE' },
  });
  await vi.waitFor(() => {
    const calls = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { msg: string; status?: string; cause?: string })
      .filter((entry) => entry.msg === 'upstream call');
    expect(calls.at(-1)).toMatchObject({ status: 'UPSTREAM_UNAVAILABLE', cause: 'ECONNREFUSED' });
  });
});
