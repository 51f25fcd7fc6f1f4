/**
 * Typed clients as the docs tell a newcomer to build them, each from an empty
 * folder outside the project (so nothing resolves from duograph's own
 * node_modules): the commands of docs/operations.md install relay-compiler
 * and GraphQL Codegen and build both trusted-document sets with the configs
 * shown there, and the graphql-ws client of docs/subscriptions.md runs as
 * `watch-jobs.mjs` after its own install, until it prints an event.
 *
 * Packages come from the npm registry, or from npm's cache, which `npm ci`
 * of this project filled with the same packages.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const folders: string[] = [];
let t: TestApp;

/** The fenced block of `lang` on a page that follows `marker`. */
function blockAfter(page: string, marker: string, lang: string): string {
  const text = readFileSync(join(root, page), 'utf8');
  const at = text.indexOf(marker);
  if (at < 0) throw new Error(`${page} no longer says "${marker}"`);
  const body = new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(text.slice(at))?.[1];
  if (body === undefined) throw new Error(`${page} has no ${lang} block after "${marker}"`);
  return body;
}

/** A block's commands: comments and blank lines dropped. */
function commandsOf(body: string): string[] {
  return body
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

function emptyFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'duograph-frontend-'));
  folders.push(dir);
  return dir;
}

/** Runs a documented command in `dir` as a shell would, the clone of duograph being this checkout. */
function run(command: string, dir: string): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command.replaceAll('../duograph/', `${root}/`)], {
      cwd: dir,
      // npm's own settings, not flags on the documented command: the cache first, no audit or funding notes.
      env: { ...process.env, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('close', (status) => resolve({ status, output }));
  });
}

/** The first line a process prints, or its output when it exits without one. */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0] ?? '');
    });
    child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`exited with ${code} before printing a line: ${out}`)));
  });
}

beforeAll(async () => {
  t = await createTestApp({ sandbox: { clock: 'manual' } });
});
afterAll(async () => {
  await t.close();
  await Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true })));
}, 300_000);

describe('typed clients from an empty folder, as the docs say', () => {
  it('builds the Relay and the Codegen sets of docs/operations.md with its commands and configs', async () => {
    const dir = emptyFolder();
    writeFileSync(join(dir, 'relay.config.json'), blockAfter('docs/operations.md', 'A Relay config that', 'jsonc'));
    writeFileSync(join(dir, 'codegen.json'), blockAfter('docs/operations.md', 'A GraphQL Codegen config', 'jsonc'));
    // The reader's own operations: a Relay query in a .ts file, a Codegen query in a .graphql file.
    const steps = commandsOf(blockAfter('docs/operations.md', 'From an empty frontend folder', 'sh'));
    const install = steps.findIndex((command) => command.startsWith('npm install'));
    for (const [i, command] of steps.entries()) {
      const result = await run(command, dir);
      expect(result.status, `${command}\n${result.output}`).toBe(0);
      if (i === install) {
        // Operations go in once the tools are there; src/ itself comes from the documented mkdir.
        expect(existsSync(join(dir, 'node_modules', '.bin', 'relay-compiler'))).toBe(true);
      }
      if (command.startsWith('mkdir')) {
        writeFileSync(
          join(dir, 'src', 'Jobs.ts'),
          "import { graphql } from 'relay-runtime';\n\nexport const jobs = graphql`\n  query JobsQuery($fullPath: String!) {\n    project(fullPath: $fullPath) { jobs(first: 5) { nodes { restId name status } } }\n  }\n`;\n",
        );
        writeFileSync(
          join(dir, 'src', 'pipelines.graphql'),
          'query RecentPipelines($fullPath: String!) {\n  project(fullPath: $fullPath) { pipelines(first: 5) { nodes { restId status } } }\n}\n',
        );
      }
    }
    expect(readdirSync(join(dir, 'src', '__generated__'))).toContain('JobsQuery.graphql.ts');
    const relayIds = JSON.parse(readFileSync(join(dir, 'persisted-documents', 'relay.json'), 'utf8')) as Record<string, string>;
    expect(Object.values(relayIds)).toEqual([expect.stringContaining('query JobsQuery')]);
    const codegenIds = JSON.parse(readFileSync(join(dir, 'src', 'gql', 'persisted-documents.json'), 'utf8')) as Record<string, string>;
    expect(Object.values(codegenIds)).toEqual([expect.stringContaining('query RecentPipelines')]);
    // The documented scalars: a REST id is a number in the client's types.
    expect(readFileSync(join(dir, 'src', 'gql', 'graphql.ts'), 'utf8')).toMatch(/restId\??: number/);
  }, 600_000);

  it('runs the graphql-ws client of docs/subscriptions.md as watch-jobs.mjs after its install, until it prints an event', async () => {
    const dir = emptyFolder();
    const steps = commandsOf(blockAfter('docs/subscriptions.md', 'client below as `watch-jobs.mjs`', 'sh'));
    expect(steps.at(-1)).toBe('node watch-jobs.mjs');
    writeFileSync(join(dir, 'watch-jobs.mjs'), blockAfter('docs/subscriptions.md', '`watch-jobs.mjs`:', 'js').replace('localhost:4000', t.url.host));
    for (const command of steps.slice(0, -1)) {
      const result = await run(command, dir);
      expect(result.status, `${command}\n${result.output}`).toBe(0);
    }
    // No package.json says "type": "module": the .mjs ending is what lets Node run the import syntax.
    expect(
      existsSync(join(dir, 'package.json')) ? (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { type?: string }).type : undefined,
    ).toBeUndefined();
    const child = spawn(process.execPath, ['watch-jobs.mjs'], { cwd: dir });
    try {
      const line = await firstLine(child);
      expect(JSON.parse(line)).toMatchObject({ jobStatusUpdated: { restId: expect.any(Number), name: expect.any(String), status: expect.any(String) } });
    } finally {
      child.kill();
    }
  }, 600_000);
});
