/**
 * `/mcp`: the graph for agents, over MCP's Streamable HTTP transport (the
 * official SDK), on the GraphQL port. Stateless: each POST is a whole
 * exchange (an SDK server and transport made for it, JSON answers), so any
 * worker or instance behind a load balancer serves any call.
 *
 * A tool call runs its operation through the GraphQL endpoint in this
 * process, with the credential headers of the MCP request itself
 * (Private-Token, Authorization: Bearer, Sudo, Job-Token,
 * X-Hubzilla-Authorization): the same limits, costs, request ids, metrics and
 * traces as any GraphQL request, nothing stored, and a credential never in a
 * result. An `Origin` header (a browser) must be a loopback one, PUBLIC_URL's
 * or one of MCP_ALLOWED_ORIGINS, against DNS rebinding.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { type DocumentNode, Kind, type GraphQLSchema, type OperationDefinitionNode, parse, printType, validate } from 'graphql';
import { WATCH_JOB_TOOL, watchJob } from './mcp-live.js';
import type { McpTool } from './mcp-tools.js';

export const MCP_PATH = '/mcp';

/** The version the MCP server reports: the package's (src/server/ from the sources, dist/src/server/ built). */
export const GATEWAY_VERSION: string = (() => {
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'duograph' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // Not there: the other depth.
    }
  }
  return '0.0.0';
})();

/** The request headers a tool call forwards: the credentials GraphQL reads, and the request id. */
const FORWARDED = ['private-token', 'authorization', 'sudo', 'job-token', 'x-hubzilla-authorization', 'x-request-id'];

/** A GraphQL answer as the endpoint sends it. */
export interface GraphqlAnswer {
  status: number;
  body: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] } | null;
}

export interface McpOptions {
  tools: readonly McpTool[];
  /** Runs an operation through the GraphQL endpoint with these headers. */
  execute: (
    operation: { query?: string; documentId?: string; operationName?: string; variables: Record<string, unknown> },
    headers: Record<string, string>,
  ) => Promise<GraphqlAnswer>;
  /** Offers watch_job, which runs its own operations as text: not where only trusted documents run. */
  live: boolean;
  /** Opens a GraphQL subscription over SSE with these headers (watch_job). */
  subscribe: (operation: { query: string; variables: Record<string, unknown> }, headers: Record<string, string>, signal: AbortSignal) => Promise<Response>;
  /** The exploration tools (MCP_EXPLORE), over this schema; `mutations` lets run_query run one (MCP_MUTATIONS). */
  explore: { schema: GraphQLSchema; mutations: boolean } | null;
  /** Browser origins allowed besides the loopback ones (MCP_ALLOWED_ORIGINS, PUBLIC_URL's). */
  allowedOrigins: readonly string[];
  /** Largest JSON-RPC body read (MAX_BODY_BYTES). */
  maxBodyBytes: number;
  version: string;
}

function send(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code: status === 403 ? -32001 : -32000, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}

/**
 * True for a browser page the operator let in (MCP_ALLOWED_ORIGINS, the
 * origin of PUBLIC_URL) or one on this machine's loopback names. Never the
 * Host header's word: under DNS rebinding, evil.example resolves to this
 * machine and its page sends Host and Origin both as evil.example.
 */
function originAllowed(origin: string, allowed: readonly string[]): boolean {
  if (allowed.includes(origin)) return true;
  try {
    const { hostname } = new URL(origin);
    return hostname === 'localhost' || hostname === '127.0.0.1' || hostname === '[::1]';
  } catch {
    return false;
  }
}

async function readJson(req: IncomingMessage, max: number): Promise<unknown | 'too-large' | 'bad'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) return 'too-large';
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return 'bad';
  }
}

/** What an agent can do about an error, by its code. */
const HINTS: Readonly<Record<string, string>> = {
  UNAUTHENTICATED:
    'Send credentials with the MCP request: Private-Token (or Authorization: Bearer) for GitLab, X-Hubzilla-Authorization (Basic login:password, or Bearer) for Hubzilla.',
  FORBIDDEN: 'These credentials may not do this: use an account with the role it needs.',
  NOT_FOUND: 'Check the path or id (find_project or my_projects list what the caller can see).',
  BAD_USER_INPUT: 'Fix the arguments as the message says; a cost refusal means smaller pages (first) or fewer nested lists.',
  UPSTREAM_RATE_LIMITED: 'The upstream is rate limiting these credentials: retry after extensions.upstream.retryAfterSeconds.',
  RATE_LIMITED: "The gateway's allowance of upstream calls for these credentials is spent: retry after retryAfterSeconds.",
  UPSTREAM_TIMEOUT: 'The upstream did not answer in time: retry; a write may have been applied (see mayHaveBeenApplied).',
  UPSTREAM_UNAVAILABLE: 'The upstream could not be reached: retry later.',
  OPERATION_LIMIT: 'The operation is over a limit: ask for less.',
};

/** A GraphQL answer as a tool result: the data as structured content, errors with their code and a hint, marked as errors. */
export function toolResult(answer: GraphqlAnswer): CallToolResult {
  const errors = answer.body?.errors ?? [];
  const data = answer.body?.data ?? null;
  if (errors.length === 0 && answer.status < 400) {
    const structured = (data ?? {}) as Record<string, unknown>;
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  }
  const lines = (errors.length ? errors : [{ message: `The gateway answered ${answer.status}.`, extensions: {} }]).map((error) => {
    const code = typeof error.extensions?.code === 'string' ? error.extensions.code : 'ERROR';
    const hint = HINTS[code];
    const extra = error.extensions?.retryAfterSeconds ?? (error.extensions?.upstream as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds;
    return `${code}: ${error.message}${extra === undefined ? '' : ` (retry after ${extra} s)`}${hint ? ` ${hint}` : ''}`;
  });
  return {
    isError: true,
    content: [{ type: 'text', text: lines.join('\n') }],
    ...(data ? { structuredContent: data as Record<string, unknown> } : {}),
  };
}

const EXPLORE_NAMES = new Set(['schema_type', 'validate_operation', 'run_query']);

/** The exploration tools (MCP_EXPLORE): for an agent that writes its own operations. */
function exploreTools(mutations: boolean) {
  const read = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
  return [
    {
      name: 'schema_type',
      description:
        'The graph, compact: without a name, the root fields (queries, and mutations where enabled) with their arguments and types; with the name of a type, its fields as SDL without descriptions.',
      inputSchema: {
        type: 'object' as const,
        properties: { name: { type: 'string', description: 'A type name, e.g. Project, Pipeline, ChannelItem.' } },
        additionalProperties: false,
      },
      annotations: read,
    },
    {
      name: 'validate_operation',
      description: 'Checks a GraphQL operation against the schema without running it: "valid", or each error.',
      inputSchema: { type: 'object' as const, properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false },
      annotations: read,
    },
    {
      name: 'run_query',
      description: `Runs a GraphQL ${mutations ? 'query or mutation' : 'query'} with the caller's credentials, within the gateway's cost limit (ask for small pages). The result is the GraphQL result.`,
      inputSchema: {
        type: 'object' as const,
        properties: { query: { type: 'string' }, variables: { type: 'object', description: "Values of the operation's variables." } },
        required: ['query'],
        additionalProperties: false,
      },
      annotations: mutations ? { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true } : { ...read, openWorldHint: true },
    },
  ];
}

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
const failure = (value: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text: value }] });

/** A type as SDL without its descriptions: what an agent needs, at a fraction of the tokens. */
function compactType(schema: GraphQLSchema, name: string): string | null {
  const type = schema.getType(name);
  if (!type || name.startsWith('__')) return null;
  return printType(type)
    .replace(/^\s*"""[\s\S]*?"""\n/gm, '')
    .replace(/^\s*"[^"\n]*"\n/gm, '');
}

function rootFields(schema: GraphQLSchema, mutations: boolean): string {
  const roots = [schema.getQueryType(), mutations ? schema.getMutationType() : null];
  return roots
    .filter((root): root is NonNullable<typeof root> => root !== null && root !== undefined)
    .map((root) => {
      const fields = Object.values(root.getFields())
        .filter((field) => !field.name.startsWith('_'))
        .map((field) => {
          const args = field.args.length ? `(${field.args.map((a) => `${a.name}: ${String(a.type)}`).join(', ')})` : '';
          const about = field.description ? ` # ${field.description.split(/(?<=\.)\s/)[0]}` : '';
          return `  ${field.name}${args}: ${String(field.type)}${about}`;
        });
      return `type ${root.name} {\n${fields.join('\n')}\n}`;
    })
    .join('\n\n');
}

async function runExplore(
  name: string,
  args: Record<string, unknown>,
  explore: { schema: GraphQLSchema; mutations: boolean },
  execute: (operation: { query: string; variables: Record<string, unknown> }) => Promise<GraphqlAnswer>,
): Promise<CallToolResult> {
  const { schema, mutations } = explore;
  if (name === 'schema_type') {
    if (args.name === undefined) return text(rootFields(schema, mutations));
    const sdl = typeof args.name === 'string' ? compactType(schema, args.name) : null;
    return sdl === null
      ? failure(`BAD_USER_INPUT: No type "${String(args.name).slice(0, 80)}" in the schema. Call schema_type without a name for the root fields.`)
      : text(sdl);
  }
  if (typeof args.query !== 'string') return failure('BAD_USER_INPUT: "query" must be a GraphQL operation as text.');
  let document: DocumentNode;
  try {
    document = parse(args.query);
  } catch (error) {
    return failure(`GRAPHQL_PARSE_FAILED: ${(error as Error).message}`);
  }
  if (name === 'validate_operation') {
    const errors = validate(schema, document);
    return errors.length === 0 ? text('valid') : failure(errors.map((e) => `GRAPHQL_VALIDATION_FAILED: ${e.message}`).join('\n'));
  }
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (operations.some((d) => d.operation === 'subscription')) return failure('BAD_USER_INPUT: Subscriptions do not run as a tool call.');
  if (!mutations && operations.some((d) => d.operation === 'mutation')) {
    return failure('FORBIDDEN: Mutations run only where the operator enabled them (MCP_MUTATIONS).');
  }
  const variables = args.variables && typeof args.variables === 'object' ? (args.variables as Record<string, unknown>) : {};
  return toolResult(await execute({ query: args.query, variables }));
}

/** Serves `/mcp`; false for other paths. */
export function handleMcp(req: IncomingMessage, res: ServerResponse, options: McpOptions): boolean {
  if ((req.url ?? '/').split('?', 1)[0] !== MCP_PATH) return false;
  const origin = req.headers.origin;
  if (origin !== undefined && !originAllowed(origin, options.allowedOrigins)) {
    req.resume();
    send(res, 403, `Origin ${origin.slice(0, 100)} may not use this MCP endpoint (MCP_ALLOWED_ORIGINS).`);
    return true;
  }
  // Stateless: no session to resume (GET) or end (DELETE).
  if (req.method !== 'POST') {
    req.resume();
    send(res, 405, 'This MCP endpoint is stateless: POST each JSON-RPC message.', { allow: 'POST' });
    return true;
  }
  void serve(req, res, options).catch(() => {
    if (!res.headersSent) send(res, 500, 'Unexpected error.');
    else res.destroy();
  });
  return true;
}

async function serve(req: IncomingMessage, res: ServerResponse, options: McpOptions): Promise<void> {
  const body = await readJson(req, options.maxBodyBytes);
  if (body === 'too-large') return send(res, 413, `The message is larger than ${options.maxBodyBytes} bytes.`);
  if (body === 'bad') return send(res, 400, 'The body is not JSON.');
  const headers: Record<string, string> = {};
  for (const name of FORWARDED) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const server = new Server(
    { name: 'duograph', version: options.version },
    {
      capabilities: { tools: {} },
      instructions:
        'Tools over GitLab CI and a Hubzilla channel, with the credentials this MCP client sends (Private-Token for GitLab, X-Hubzilla-Authorization for Hubzilla). Start with my_projects.',
    },
  );
  const byName = new Map(options.tools.map((tool) => [tool.name, tool]));
  const explore = options.explore;
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      ...options.tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema as { type: 'object' },
        annotations: { readOnlyHint: !tool.mutation, destructiveHint: tool.destructive, idempotentHint: !tool.mutation, openWorldHint: true },
      })),
      ...(options.live ? [WATCH_JOB_TOOL] : []),
      ...(explore ? exploreTools(explore.mutations) : []),
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    if (options.live && request.params.name === WATCH_JOB_TOOL.name) {
      const token = request.params._meta?.progressToken;
      let step = 0;
      const progress = {
        report: async (message: string) => {
          if (token !== undefined)
            await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: ++step, message } });
        },
      };
      const runner = {
        subscribe: (operation: { query: string; variables: Record<string, unknown> }, signal: AbortSignal) => options.subscribe(operation, headers, signal),
        query: async (operation: { query: string; variables: Record<string, unknown> }) => (await options.execute(operation, headers)).body,
      };
      return watchJob((request.params.arguments ?? {}) as Record<string, unknown>, runner, progress, extra.signal);
    }
    if (explore && EXPLORE_NAMES.has(request.params.name)) {
      return runExplore(request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>, explore, (operation) =>
        options.execute(operation, headers),
      );
    }
    const tool = byName.get(request.params.name);
    if (!tool) return { isError: true, content: [{ type: 'text', text: `No tool "${request.params.name.slice(0, 64)}": list the tools first.` }] };
    const variables = (request.params.arguments ?? {}) as Record<string, unknown>;
    // A trusted document goes by its id, so that it runs where only trusted documents may (PERSISTED_DOCUMENTS_ONLY).
    const named = tool.documentId === null ? { query: tool.document } : { documentId: tool.documentId };
    return toolResult(await options.execute({ ...named, operationName: tool.operationName, variables }, headers));
  });
  // JSON answers, but an event stream for watch_job, whose progress comes before its answer.
  const call = body as { method?: unknown; params?: { name?: unknown } } | null;
  const live = call?.method === 'tools/call' && call.params?.name === WATCH_JOB_TOOL.name;
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !live });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}
