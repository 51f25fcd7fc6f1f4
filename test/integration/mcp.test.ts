/**
 * `/mcp` with the MCP SDK's own client over real HTTP, against the sandbox
 * GitLab and Hubzilla: the tools listed, every shipped tool called, input
 * refused as GraphQL refuses it, each call's own credentials forwarded and
 * never shared between two clients, the cost limit applied, the mutation
 * tool absent until enabled, a foreign Origin refused.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STEP_MS } from '../../src/sandbox/gitlab/server.js';
import { loadConfig } from '../../src/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const DEMO_HUB = `Basic ${Buffer.from('demo:demo-pass').toString('base64')}`;

async function connect(t: TestApp, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'duograph-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', t.url), { requestInit: { headers } }));
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;

describe('/mcp', () => {
  let t: TestApp;
  let demo: Client;
  beforeAll(async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
    demo = await connect(t, { 'private-token': 'demo-token', 'x-hubzilla-authorization': DEMO_HUB });
  });
  afterAll(async () => {
    await demo.close();
    await t.close();
  });

  it('lists the read tools that ship, each read-only with an input schema; no mutation unless enabled', async () => {
    const { tools } = await demo.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      'my_projects',
      'find_project',
      'recent_pipelines',
      'pipeline_jobs',
      'job_log_tail',
      'channel_stream',
      'watch_job',
    ]);
    for (const tool of tools) {
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      expect(tool.description?.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
    }
    expect(tools.find((tool) => tool.name === 'find_project')?.inputSchema).toMatchObject({
      required: ['fullPath'],
      properties: { fullPath: { type: 'string' } },
    });
    expect(tools.find((tool) => tool.name === 'recent_pipelines')?.inputSchema.properties?.status).toMatchObject({
      enum: expect.arrayContaining(['FAILED', 'SUCCESS']),
    });
    // An optional argument is left out, not typed ["integer","null"] (which some MCP clients refuse); its default is said.
    expect(tools.find((tool) => tool.name === 'channel_stream')?.inputSchema.properties?.first).toMatchObject({ type: 'integer', default: 10 });
    const typeArrays = JSON.stringify(tools.map((tool) => tool.inputSchema)).match(/"type":\[/g);
    expect(typeArrays).toBeNull();
  });

  it('answers every shipped tool with the GraphQL result as structured content', async () => {
    const mine = await call(demo, 'my_projects');
    expect(mine.isError).toBeFalsy();
    const nodes = (mine.structuredContent as { projects: { nodes: { pathWithNamespace: string }[] } }).projects.nodes;
    expect(nodes.map((n) => n.pathWithNamespace)).toContain('platform/core');
    expect(JSON.parse((mine.content[0] as { text: string }).text)).toEqual(mine.structuredContent);

    const found = await call(demo, 'find_project', { fullPath: 'platform/core' });
    expect(found.structuredContent).toMatchObject({ project: { pathWithNamespace: 'platform/core', name: 'Core' } });

    const pipelines = await call(demo, 'recent_pipelines', { fullPath: 'platform/core', status: 'FAILED' });
    const failed = (
      pipelines.structuredContent as { project: { pipelines: { nodes: { restId: number; status: string; jobs: { nodes: { restId: number }[] } }[] } } }
    ).project.pipelines.nodes;
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((p) => p.status === 'FAILED')).toBe(true);
    const pipeline = failed[0];
    const job = pipeline?.jobs.nodes[0];
    expect(job).toBeDefined();

    const jobs = await call(demo, 'pipeline_jobs', { fullPath: 'platform/core', pipelineId: String(pipeline?.restId) });
    expect(jobs.structuredContent).toMatchObject({
      project: { pipeline: { restId: pipeline?.restId, jobs: { nodes: expect.arrayContaining([expect.objectContaining({ restId: job?.restId })]) } } },
    });

    const log = await call(demo, 'job_log_tail', { fullPath: 'platform/core', jobId: String(job?.restId), lines: 5 });
    const trace = (log.structuredContent as { project: { job: { trace: string | null } } }).project.job.trace;
    expect(typeof trace).toBe('string');
    expect((trace ?? '').split('\n').length).toBeLessThanOrEqual(5);

    const stream = await call(demo, 'channel_stream', { first: 3 });
    expect(stream.structuredContent).toMatchObject({ channel: { nickname: 'demo', stream: { nodes: expect.any(Array) } } });
    expect((stream.structuredContent as { channel: { stream: { nodes: unknown[] } } }).channel.stream.nodes).toHaveLength(3);
  });

  it('answers watch_job for a job the caller cannot see as a tool error with the code, at once', async () => {
    const result = (await demo.callTool({ name: 'watch_job', arguments: { fullPath: 'platform/core', jobId: '999999', maxSeconds: 60 } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(/^NOT_FOUND: /);
  });

  it('stops waiting after maxSeconds and says so, with what it knows', async () => {
    // Job 2005 stays created until the sandbox's clock moves on (the next test moves it).
    const result = (await demo.callTool({ name: 'watch_job', arguments: { fullPath: 'demo/playground', jobId: '2005', maxSeconds: 1 } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ finished: false, waitedTooLong: true });
  });

  it('waits for a job with watch_job, each status as progress, then answers with its end and its log', async () => {
    const progress: { progress: number; message?: string }[] = [];
    const watching = demo.callTool({ name: 'watch_job', arguments: { fullPath: 'platform/core', jobId: '1013', tailLines: 3 } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    // The job runs until the sandbox's clock moves on; the subscription's first event is its state now.
    const statuses = () => progress.map((p) => p.message).filter((m) => m?.startsWith('rspec: '));
    const lines = () => progress.map((p) => p.message ?? '').filter((m) => m.startsWith('log: '));
    // The log's newest line comes as progress too: both watches have spoken before the job moves on (on a busy machine
    // the log's may come second; the job's end would then stop it before its first line).
    await vi.waitFor(
      () => {
        expect(statuses()).toEqual(['rspec: RUNNING']);
        expect(lines().length).toBeGreaterThan(0);
      },
      { timeout: 60_000 },
    );
    t.sandbox.advance(STEP_MS);
    const result = (await watching) as CallToolResult;
    expect(statuses()).toEqual(['rspec: RUNNING', 'rspec: SUCCESS']);
    // Within its cap.
    expect(lines().every((m) => m.length <= 205)).toBe(true);
    // Progress counts up, as the protocol asks.
    expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1));
    expect(result.structuredContent).toMatchObject({
      job: { restId: 1013, status: 'SUCCESS', trace: expect.any(String) },
      finished: true,
      waitedTooLong: false,
    });
    // Nothing left watching once it answered.
    await vi.waitFor(() => expect(t.app.hub.stats()).toMatchObject({ pollers: 0, streams: 0 }));
  });

  it('refuses arguments as GraphQL does, as a tool error with the code and what to do', async () => {
    const missing = await call(demo, 'find_project', {});
    expect(missing.isError).toBe(true);
    expect((missing.content[0] as { text: string }).text).toMatch(
      /^BAD_USER_INPUT: Variable "\$fullPath" of required type "String!" was not provided\. Fix the arguments/,
    );
    const wrong = await call(demo, 'my_projects', { first: 'many' });
    expect((wrong.content[0] as { text: string }).text).toMatch(/^BAD_USER_INPUT: Variable "\$first" got invalid value "many"/);
    const tooMany = await call(demo, 'my_projects', { first: 101 });
    expect((tooMany.content[0] as { text: string }).text).toMatch(/^BAD_USER_INPUT: .*first/);
    const unknown = await call(demo, 'drop_database');
    expect(unknown).toMatchObject({ isError: true, content: [{ type: 'text', text: 'No tool "drop_database": list the tools first.' }] });
  });

  it("forwards each call's own credentials, and shares nothing between two clients", async () => {
    const anonymous = await connect(t, {});
    const bob = await connect(t, { 'private-token': 'bob-token' });
    try {
      t.resetCalls();
      const asBob = await call(bob, 'my_projects');
      expect(t.calls().map((c) => c.headers['private-token'])).toEqual(['bob-token']);
      const bobs = (asBob.structuredContent as { projects: { nodes: { pathWithNamespace: string }[] } }).projects.nodes.map((n) => n.pathWithNamespace);
      const demos = ((await call(demo, 'my_projects')).structuredContent as { projects: { nodes: { pathWithNamespace: string }[] } }).projects.nodes.map(
        (n) => n.pathWithNamespace,
      );
      expect(bobs).not.toEqual(demos);
      // Hubzilla without its credential: a tool error that says which header to send; no credential in any result.
      const refused = await call(anonymous, 'channel_stream');
      expect(refused.isError).toBe(true);
      expect((refused.content[0] as { text: string }).text).toMatch(/^UNAUTHENTICATED: Hubzilla needs credentials.* X-Hubzilla-Authorization/);
      expect(JSON.stringify([asBob, refused])).not.toMatch(/bob-token|demo-pass/);
    } finally {
      await anonymous.close();
      await bob.close();
    }
  });

  it('answers a failing upstream as a tool error with its code, and a body that is not JSON with 400', async () => {
    t.sandbox.addFault({ path: /\/projects\/platform%2Fcore$/, status: 500, body: '{"message":"500 Internal Server Error: secret stack"}', times: 1 });
    const failed = await call(demo, 'find_project', { fullPath: 'platform/core' });
    expect(failed.isError).toBe(true);
    expect((failed.content[0] as { text: string }).text).toMatch(/^UPSTREAM_ERROR: /);
    expect(JSON.stringify(failed)).not.toContain('secret stack');
    const broken = await fetch(new URL('/mcp', t.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":',
    });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ jsonrpc: '2.0', error: { message: 'The body is not JSON.' } });
  });

  it('refuses a browser page of another origin, and is stateless (POST only)', async () => {
    const foreign = await fetch(new URL('/mcp', t.url), {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ error: { message: 'Origin https://evil.example may not use this MCP endpoint (MCP_ALLOWED_ORIGINS).' } });
    // DNS rebinding: evil.example resolves to this machine, so its page sends Host and Origin alike: still refused.
    const rebound = await new Promise<number>((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const req = httpRequest(
        new URL('/mcp', t.url),
        {
          method: 'POST',
          headers: {
            host: 'evil.example:4000',
            origin: 'http://evil.example:4000',
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(rebound).toBe(403);
    // A page on this machine's loopback names may (the GraphiQL page at localhost, a local agent UI).
    const local = await fetch(new URL('/mcp', t.url), {
      method: 'POST',
      headers: { origin: 'http://localhost:5173', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(local.status).toBe(200);
    await local.arrayBuffer();
    const get = await fetch(new URL('/mcp', t.url), { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    await get.arrayBuffer();
  });
});

describe('/mcp with MCP_MUTATIONS and MAX_COST', () => {
  let t: TestApp;
  let client: Client;
  beforeAll(async () => {
    t = await createTestApp({ env: { MCP_MUTATIONS: 'true', MAX_COST: '20', MAX_BODY_BYTES: '4096' } });
    client = await connect(t, { 'private-token': 'demo-token', 'x-hubzilla-authorization': DEMO_HUB });
  });
  afterAll(async () => {
    await client.close();
    await t.close();
  });

  it("offers post_to_channel, a write that destroys nothing, and posts with the caller's credential", async () => {
    const tool = (await client.listTools()).tools.find((x) => x.name === 'post_to_channel');
    expect(tool?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    const posted = await call(client, 'post_to_channel', { body: 'Pipeline 101 failed: the build job ran out of memory.', messageId: 'mcp-summary-1' });
    expect(posted.structuredContent).toMatchObject({ channelItemPost: { item: { messageId: 'https://hub.duograph.test/item/mcp-summary-1' }, errors: [] } });
    expect(t.hubzillaCalls({ path: 'item/update' })[0]?.headers.authorization).toBe(DEMO_HUB);
  });

  it('answers a message above MAX_BODY_BYTES with 413, before reading on', async () => {
    t.resetHubzillaCalls();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'post_to_channel', arguments: { body: 'x '.repeat(5_000) } } });
    const res = await fetch(new URL('/mcp', t.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body,
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: { message: 'The message is larger than 4096 bytes.' } });
    expect(t.hubzillaCalls()).toHaveLength(0);
  });

  it('applies the cost limit: a tool over it is a tool error saying what to narrow', async () => {
    const refused = await call(client, 'recent_pipelines', { fullPath: 'platform/core', first: 50 });
    expect(refused.isError).toBe(true);
    expect((refused.content[0] as { text: string }).text).toMatch(
      /^BAD_USER_INPUT: The operation could cause up to \d+ upstream calls, more than the limit of 20/,
    );
  });
});

describe('/mcp over trusted documents (PERSISTED_DOCUMENTS_ONLY, MCP_TOOLS)', () => {
  let t: TestApp;
  let client: Client;
  const dir = mkdtempSync(join(tmpdir(), 'duograph-mcp-'));
  beforeAll(async () => {
    // A frontend's trusted documents (Relay's id -> text), and a manifest describing one of them for agents.
    writeFileSync(
      join(dir, 'documents.json'),
      JSON.stringify({ 'core-visibility-1': 'query core_visibility($fullPath: String!) { project(fullPath: $fullPath) { visibility } }' }),
    );
    writeFileSync(
      join(dir, 'tools.json'),
      JSON.stringify({
        tools: [{ documentId: 'core-visibility-1', description: 'Whether a GitLab project is public, internal or private, by its full path.' }],
      }),
    );
    t = await createTestApp({
      env: { PERSISTED_DOCUMENTS: join(dir, 'documents.json'), PERSISTED_DOCUMENTS_ONLY: 'true', MCP_TOOLS: join(dir, 'tools.json') },
    });
    client = await connect(t, { 'private-token': 'demo-token' });
  });
  afterAll(async () => {
    await client.close();
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('offers the described trusted document as a tool and runs it by id, where text operations are refused', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['core_visibility']);
    const answer = await call(client, 'core_visibility', { fullPath: 'platform/core' });
    expect(answer.structuredContent).toEqual({ project: { visibility: 'PUBLIC' } });
  });
});

describe('/mcp with MCP_EXPLORE', () => {
  let t: TestApp;
  let client: Client;
  beforeAll(async () => {
    t = await createTestApp({ env: { MCP_EXPLORE: 'true', MAX_COST: '20' } });
    client = await connect(t, { 'private-token': 'demo-token' });
  });
  afterAll(async () => {
    await client.close();
    await t.close();
  });

  const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text;

  it('offers the schema by type, compact, and validates an operation without running it', async () => {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['schema_type', 'validate_operation', 'run_query']));
    const roots = textOf(await call(client, 'schema_type'));
    expect(roots).toMatch(/^type Query \{\n/);
    expect(roots).toContain('  project(fullPath: String, id: ID): Project # ');
    expect(roots).not.toContain('type Mutation');
    const project = textOf(await call(client, 'schema_type', { name: 'Pipeline' }));
    expect(project).toMatch(/^type Pipeline implements Node \{/);
    expect(project).not.toContain('"""');
    expect((await call(client, 'schema_type', { name: 'Nope' })).isError).toBe(true);
    t.resetCalls();
    expect(textOf(await call(client, 'validate_operation', { query: '{ project(fullPath: "x") { name } }' }))).toBe('valid');
    expect(textOf(await call(client, 'validate_operation', { query: '{ project(fullPath: "x") { nope } }' }))).toMatch(
      /^GRAPHQL_VALIDATION_FAILED: Cannot query field "nope"/,
    );
    expect(t.calls()).toHaveLength(0);
  });

  it('runs a query within the cost limit, and no mutation unless enabled', async () => {
    const ran = await call(client, 'run_query', { query: 'query ($p: String!) { project(fullPath: $p) { name } }', variables: { p: 'platform/core' } });
    expect(ran.structuredContent).toEqual({ project: { name: 'Core' } });
    const costly = await call(client, 'run_query', { query: '{ projects(first: 50) { nodes { name forkedFrom { name } } } }' });
    expect(textOf(costly)).toMatch(/^BAD_USER_INPUT: The operation could cause up to \d+ upstream calls/);
    const write = await call(client, 'run_query', { query: 'mutation { projectStar(input: { id: "1" }) { errors { message } } }' });
    expect(write).toMatchObject({ isError: true, content: [{ text: 'FORBIDDEN: Mutations run only where the operator enabled them (MCP_MUTATIONS).' }] });
  });
});

describe('MCP settings', () => {
  it('refuses MCP_EXPLORE with PERSISTED_DOCUMENTS_ONLY, and an origin with a path', () => {
    expect(() => loadConfig({ MCP_EXPLORE: 'true', PERSISTED_DOCUMENTS_ONLY: 'true', PERSISTED_DOCUMENTS: './docs.json' }, [])).toThrow(
      'MCP_EXPLORE runs operations sent as text, which PERSISTED_DOCUMENTS_ONLY refuses: use one or the other',
    );
    expect(() => loadConfig({ MCP_ALLOWED_ORIGINS: 'https://app.example.com/path' }, [])).toThrow(/MCP_ALLOWED_ORIGINS takes origins like/);
    expect(loadConfig({ MCP_ALLOWED_ORIGINS: 'https://a.example, http://localhost:3000' }, []).mcpAllowedOrigins).toEqual([
      'https://a.example',
      'http://localhost:3000',
    ]);
  });
});
