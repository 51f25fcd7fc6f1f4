/**
 * The docs cannot drift from the code: every fenced block of README.md,
 * CONTRIBUTING.md and docs/*.md is run here, or names the test that runs it.
 *
 * - `graphql`: executed against the gateway on the sandbox (a subscription
 *   until its first event), with no error.
 * - `sh`: each command (continuations joined, comments dropped) is matched
 *   against COMMANDS below and checked by its rule: curl commands run against
 *   the gateway (`localhost:4000` rewritten to its address), `node
 *   dist/src/main.js` commands that print run for real, `npm start` lines are
 *   loaded as configurations, and commands that start long-lived processes or
 *   change the machine name the test that runs them. A command no rule knows
 *   fails the test: add a rule that runs it.
 * - `json` after a `sh` block: the output of that block's last command, exactly.
 * - `js`: the graphql-ws client, run from an empty folder by
 *   test/e2e/typed-clients.test.ts.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient as createSseClient } from 'graphql-sse';
import { parse } from 'graphql';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildSchema } from '../../src/schema/index.js';
import { buildTools, type ToolEntry } from '../../src/server/mcp-tools.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const PAGES = ['README.md', 'CONTRIBUTING.md', ...readdirSync(join(root, 'docs')).map((name) => `docs/${name}`)];
const scripts = Object.keys((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);

interface Block {
  page: string;
  lang: string;
  body: string;
}

const blocks: Block[] = PAGES.flatMap((page) =>
  [...readFileSync(join(root, page), 'utf8').matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ page, lang: m[1] ?? '', body: m[2] ?? '' })),
);

/** The commands of a sh block: continuation lines joined, comments and blank lines dropped. */
function commands(body: string): string[] {
  return body
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.replace(/\s+#\s.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** `A=1 B=2 rest`: the leading assignments and the rest. */
function splitEnv(command: string): { env: Record<string, string>; rest: string } {
  const env: Record<string, string> = {};
  let rest = command;
  for (;;) {
    const match = /^([A-Z_]+)=(\S*)\s+/.exec(rest);
    if (!match) return { env, rest };
    env[match[1] ?? ''] = match[2] ?? '';
    rest = rest.slice(match[0].length);
  }
}

let t: TestApp;
let base: string;
const work = mkdtempSync(join(tmpdir(), 'duograph-docs-'));

/**
 * Runs a shell command with `localhost:4000` pointing at the test gateway.
 * Asynchronous: the gateway answering it runs in this process.
 */
function shell(command: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command.replaceAll('localhost:4000', base)], { cwd: work, timeout: 110_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

type Rule = { pattern: RegExp; check: (command: string, page: string) => string | Promise<string> };

/** Commands that start long-lived processes or change the machine, and the test that runs each of them. */
const RUN_ELSEWHERE: readonly [RegExp, string][] = [
  [/^npm ci && npm test$/, '.ci/run'],
  [/^npm (ci|test)$/, '.ci/run'],
  [/^npm ci && npm start$/, 'test/e2e/production.test.ts'],
  [/^npm ci && npm pack$|^npm install -g \.\/duograph-[\d.]+\.tgz$|^n?p?x? ?duograph serve$|^npx duograph serve$/, 'test/e2e/production.test.ts'],
  [/^npm prune --omit=dev$/, 'test/e2e/production.test.ts'],
  [/^npm ci && npm run build$/, 'test/global-setup.ts'],
  [/^sudo (cp|mkdir|systemctl) |^printf .*\/etc\/duograph\/env/, 'test/e2e/production.test.ts'],
  [/^redis-server |^export REDIS_URL=/, 'test/e2e/redis-fanout.test.ts'],
  [/^WORKERS=\S+ npm start$/, 'test/integration/workers.test.ts'],
  // A new frontend's folder and a graphql-ws client's, each from an empty folder.
  [
    /^npm init -y$|^npm install (--save-dev )?(\S+@\^\d+ ?)+$|^cp \.\.\/duograph\/schema\/client\.graphql schema\.graphql$|^mkdir -p src\/__generated__ persisted-documents$|^echo '\{\}' > persisted-documents\/relay\.json$|^npx (relay-compiler|graphql-codegen)( .*)?$|^node watch-jobs\.mjs$/,
    'test/e2e/typed-clients.test.ts',
  ],
];

const COMMANDS: readonly Rule[] = [
  {
    // A configuration: loaded as the gateway would load it.
    pattern: /^([A-Z_]+=\S+\s+)*npm start( -- .*)?$/,
    check: (command) => {
      const { env, rest } = splitEnv(command);
      const args = rest
        .replace(/^npm start( -- )?/, '')
        .split(/\s+/)
        .filter(Boolean);
      loadConfig(env, args);
      return 'loaded';
    },
  },
  {
    pattern: /^([A-Z_]+=\S+\s+)*node dist\/src\/main\.js (serve|sandbox)( .*)? ?&?$/,
    check: (command) => {
      const { env, rest } = splitEnv(command);
      const args = rest.replace(/&$/, '').trim().split(/\s+/).slice(3);
      loadConfig(env, args);
      return 'loaded';
    },
  },
  {
    // Commands that print: run for real, their output must be a GraphQL document.
    pattern: /^([A-Z_]+=\S+\s+)*node dist\/src\/main\.js (print-schema|supergraph)( > \S+)?$/,
    check: async (command) => {
      const result = await shell(command.replace('node dist/src/main.js', `node ${join(root, 'dist/src/main.js')}`));
      expect(result.status, result.stderr).toBe(0);
      const file = /> (\S+)$/.exec(command)?.[1];
      const printed = file ? readFileSync(join(work, file), 'utf8') : result.stdout;
      expect(() => parse(printed)).not.toThrow();
      return printed;
    },
  },
  {
    pattern: /^curl /,
    check: async (command) => {
      // An event stream never ends by itself: three seconds of it, then its events must be there.
      // MCP clients accept both JSON and an event stream; /mcp answers JSON.
      const stream = command.includes('text/event-stream') && !command.includes('/mcp ');
      const result = await shell(stream ? `timeout 3 ${command}; true` : command);
      if (stream) expect(result.stdout).toMatch(/^data: \{"data":/m);
      expect(result.status, result.stderr).toBe(0);
      return result.stdout;
    },
  },
  {
    pattern: /^npm run ([\w:-]+)/,
    check: (command) => {
      const script = /^npm run ([\w:-]+)/.exec(command)?.[1] ?? '';
      // Scripts that only run long-lived or machine-wide things; the rest of npm test runs them in CI.
      expect(scripts).toContain(script);
      return 'script exists';
    },
  },
  {
    pattern: /^npx vitest run (\S+)( -t ".*")?$/,
    check: (command) => {
      const file = /^npx vitest run (\S+)/.exec(command)?.[1] ?? '';
      expect(existsSync(join(root, file)), file).toBe(true);
      return 'file exists';
    },
  },
  ...RUN_ELSEWHERE.map(([pattern, runner]) => ({
    pattern,
    check: () => {
      expect(existsSync(join(root, runner)), runner).toBe(true);
      return `run by ${runner}`;
    },
  })),
];

beforeAll(async () => {
  t = await createTestApp({ sandbox: { clock: 'manual' } });
  base = t.url.host;
  // The reader's own file, which the upload example sends.
  writeFileSync(join(work, 'notes.txt'), 'Notes to upload.\n');
});
afterAll(async () => {
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

describe('the docs', () => {
  it('have blocks to check', () => {
    expect(blocks.filter((b) => b.lang === 'graphql').length).toBeGreaterThanOrEqual(4);
    expect(blocks.filter((b) => b.lang === 'sh').length).toBeGreaterThanOrEqual(10);
  });

  it.each(blocks.map((b, i) => [`${b.page} #${i} ${b.lang}`, b, i] as const).filter(([, b]) => b.lang === 'sh'))(
    '%s: every command runs',
    async (_name, block, index) => {
      let last = '';
      for (const command of commands(block.body)) {
        const rule = COMMANDS.find((r) => r.pattern.test(command));
        expect(rule, `no rule checks \`${command}\` (${block.page})`).toBeDefined();
        last = await (rule as Rule).check(command, block.page);
      }
      // A json block right after shows what the last command prints, exactly.
      const next = blocks[index + 1];
      if (next?.page === block.page && next.lang === 'json') expect(JSON.parse(last)).toEqual(JSON.parse(next.body));
    },
    // A block may start several processes, each waited for until it exits: on a busy machine that takes many times as long.
    120_000,
  );

  it.each(blocks.filter((b) => b.lang === 'graphql').map((b) => [`${b.page}: ${b.body.split('\n')[0]}`, b] as const))(
    '%s runs without an error',
    async (_name, block) => {
      const operation = block.body;
      if (/^\s*subscription\b/.test(operation)) {
        const client = createSseClient({ url: t.url.href, headers: { 'private-token': 'demo-token' }, retryAttempts: 0, singleConnection: false });
        const events = client.iterate({ query: operation });
        const first = await events.next();
        await events.return?.();
        client.dispose();
        expect(first.value).toMatchObject({ data: expect.any(Object) });
        expect((first.value as { errors?: unknown }).errors).toBeUndefined();
        return;
      }
      const result = await t.gql(operation);
      expect(result.errors).toBeUndefined();
      expect(JSON.stringify(result.data)).not.toMatch(/"errors":\[\{/);
    },
  );

  it('connects the MCP client configuration of docs/mcp.md as pasted, and checks its tool manifest example against the schema', async () => {
    const config = blocks.find((b) => b.page === 'docs/mcp.md' && b.lang === 'json' && b.body.includes('mcpServers'));
    const servers = (JSON.parse(config?.body ?? '{}') as { mcpServers: Record<string, { url: string; headers: Record<string, string> }> }).mcpServers;
    const server = servers.duograph;
    expect(server).toBeDefined();
    const client = new McpClient({ name: 'docs', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server?.url.replace('localhost:4000', base) ?? ''), { requestInit: { headers: server?.headers } }),
    );
    try {
      const result = await client.callTool({ name: 'my_projects', arguments: {} });
      expect(result.isError).toBeFalsy();
      const stream = await client.callTool({ name: 'channel_stream', arguments: { first: 1 } });
      expect(stream.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    const manifest = blocks.find((b) => b.page === 'docs/mcp.md' && b.lang === 'json' && b.body.includes('"tools"'));
    const entries = (JSON.parse(manifest?.body ?? '{}') as { tools: ToolEntry[] }).tools;
    expect(buildTools(buildSchema(), entries, false).map((tool) => tool.name)).toEqual(['open_issues']);
  });
});
