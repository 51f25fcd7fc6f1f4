/**
 * Builds dist/ from the current sources first when they are newer than it
 * (scripts/build-if-stale.mjs, which `npm start` runs too),
 * so that the tests of the production commands (`npm start`, `node
 * dist/src/main.js`, the packed tarball) run what the sources say, and a run
 * of one unit test does not wait for a build it does not need. Then routes the JSON logs of every gateway the test run starts (in-process,
 * and `duograph serve` children, which inherit the environment) to one file
 * at debug level, and at the end checks that file: none of the credentials
 * or secrets the tests used may appear in it. A leak fails the run.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_SECRETS } from './helpers/secrets.js';

const ROOT = new URL('..', import.meta.url);

export default function setup(): () => void {
  const build = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`the build failed:\n${build.stdout}${build.stderr}`);
  const dir = mkdtempSync(join(tmpdir(), 'duograph-test-logs-'));
  const file = join(dir, 'gateway.log');
  process.env.LOG_FILE = file;
  process.env.LOG_LEVEL = 'debug';
  return () => {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // No file: nothing was logged, which the check below reports.
    }
    const lines = text.split('\n').filter(Boolean);
    const problems: string[] = [];
    const entries = lines.flatMap((line) => {
      try {
        return [JSON.parse(line) as { msg?: string; req?: { headers?: Record<string, string> } }];
      } catch {
        problems.push(`a log line is not JSON: ${line.slice(0, 120)}`);
        return [];
      }
    });
    // Whether the gateways log at all, with credential headers in the entries, is test/integration/logging.test.ts's job.
    const withCredentials = entries.filter((e) => e.req?.headers?.['private-token'] === '[Redacted]');
    for (const secret of TEST_SECRETS) {
      const hits = lines.filter((line) => line.includes(secret));
      if (hits.length) problems.push(`"${secret}" appears in ${hits.length} log lines, e.g. ${hits[0]?.slice(0, 300)}`);
    }
    if (problems.length) {
      // Vitest reports an error thrown here but still exits 0: the exit code has to be set too.
      process.exitCode = 1;
      throw new Error(`log redaction check failed (logs kept in ${file}):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    }
    if (entries.length > 0)
      console.log(`log redaction: ${entries.length} entries checked (${withCredentials.length} with a redacted Private-Token), no credential found`);
    rmSync(dir, { recursive: true, force: true });
  };
}
