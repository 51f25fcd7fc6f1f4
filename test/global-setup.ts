/**
 * Builds dist/ from the current sources first when they are newer than it,
 * so that the tests of the production commands (`npm start`, `node
 * dist/src/main.js`, the packed tarball) run what the sources say, and a run
 * of one unit test does not wait for a build it does not need. Then routes the JSON logs of every gateway the test run starts (in-process,
 * and `duograph serve` children, which inherit the environment) to one file
 * at debug level, and at the end checks that file: none of the credentials
 * or secrets the tests used may appear in it. A leak fails the run.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_SECRETS } from './helpers/secrets.js';

const ROOT = new URL('..', import.meta.url);
/** Written after a build: dist/ is as new as the sources it was built from. */
const STAMP = new URL('dist/.built', ROOT);

/** The newest modification time under `dir` (recursively), in ms. */
function newest(dir: URL): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = new URL(entry.name + (entry.isDirectory() ? '/' : ''), dir);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

function builtAt(): number {
  try {
    return statSync(STAMP).mtimeMs;
  } catch {
    return 0;
  }
}

export default function setup(): () => void {
  const sources = Math.max(
    newest(new URL('src/', ROOT)),
    ...['package.json', 'tsconfig.json', 'tsconfig.build.json'].map((f) => statSync(new URL(f, ROOT)).mtimeMs),
  );
  if (sources >= builtAt()) {
    const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`);
    writeFileSync(STAMP, '');
  }
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
