/**
 * MCP tools from GraphQL operations: each operation with a description in the
 * tool manifest becomes a tool named after it, its input schema derived from
 * its variables (with the schema's descriptions), its result the GraphQL
 * result. The default manifest ships below; MCP_TOOLS names another JSON
 * file of the same shape. Every document is parsed and validated against the
 * schema at start, as trusted documents are, so a stale manifest fails the
 * start, not an agent.
 */
import { readFileSync } from 'node:fs';
import {
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  getNamedType,
  getOperationAST,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  parse,
  typeFromAST,
  validate,
  valueFromASTUntyped,
} from 'graphql';

/** One entry of a tool manifest: an operation and what an agent reads about it. */
export interface ToolEntry {
  /** What the tool does, for the agent: required, as a tool without one is not offered. */
  description: string;
  /** The GraphQL document: one named query or mutation. Or `documentId`. */
  document?: string;
  /** The id of a trusted document (PERSISTED_DOCUMENTS) to offer as this tool, instead of `document`. */
  documentId?: string;
  /** Descriptions of the variables, by name (the schema's argument descriptions otherwise). */
  arguments?: Readonly<Record<string, string>>;
  /** For a mutation: whether it may destroy or overwrite what exists (false for a post that only adds). */
  destructive?: boolean;
}

/** A tool ready to list and call. */
export interface McpTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  document: string;
  /** The trusted document it runs by id, when it is one (sent by id, so PERSISTED_DOCUMENTS_ONLY lets it run). */
  documentId: string | null;
  operationName: string;
  mutation: boolean;
  destructive: boolean;
}

export interface JsonSchema {
  type?: string;
  description?: string;
  /** The value a left-out argument takes (the variable's default). */
  default?: unknown;
  format?: string;
  enum?: string[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  minimum?: number;
  maximum?: number;
}

/** A manifest that cannot be used: the message names the tool. */
export class McpToolsError extends Error {
  override readonly name = 'McpToolsError';
}

/** The tools `npm start` offers: the questions teams ask of their CI and their channel, and one post (off until MCP_MUTATIONS). */
export const DEFAULT_TOOLS: readonly ToolEntry[] = [
  {
    description:
      "Lists the GitLab projects the caller is a member of, most recently active first (path, name, web URL, last activity). Needs no argument: a first call to learn the caller's projects.",
    document: `query my_projects($first: Int = 20) {
  projects(membership: true, first: $first, orderBy: LAST_ACTIVITY_AT, sort: DESC) {
    nodes { pathWithNamespace name webUrl lastActivityAt defaultBranch }
  }
}`,
    arguments: { first: 'How many projects, 1 to 100 (default 20).' },
  },
  {
    description:
      'Finds one GitLab project by its full path (e.g. `platform/core`): its id, description, visibility, default branch, web URL and last activity; null when the caller cannot see it.',
    document: `query find_project($fullPath: String!) {
  project(fullPath: $fullPath) { id restId name pathWithNamespace description visibility defaultBranch webUrl lastActivityAt archived }
}`,
  },
  {
    description:
      'The most recent CI pipelines of a project (newest first), optionally of one branch or tag or in one state, each with its failed jobs and why they failed: the way to answer "what failed on main today".',
    document: `query recent_pipelines($fullPath: String!, $ref: String, $status: JobScope, $first: Int = 10) {
  project(fullPath: $fullPath) {
    pipelines(first: $first, ref: $ref, status: $status) {
      nodes {
        restId ref status source createdAt duration webUrl
        jobs(statuses: [FAILED]) { nodes { restId name stage failureReason webUrl } }
      }
    }
  }
}`,
    arguments: { first: 'How many pipelines, 1 to 100 (default 10).' },
  },
  {
    description: 'The jobs of one pipeline of a project (by its numeric id), with their stage, status, duration and, for failed ones, the reason.',
    document: `query pipeline_jobs($fullPath: String!, $pipelineId: ID!) {
  project(fullPath: $fullPath) {
    pipeline(id: $pipelineId) {
      restId ref status webUrl
      jobs(first: 100) { nodes { restId name stage status duration failureReason webUrl } }
    }
  }
}`,
    arguments: { pipelineId: 'Numeric id of the pipeline (restId in recent_pipelines).' },
  },
  {
    description: "The last lines of a CI job's log (by the job's numeric id), without colours: what an agent reads to say why a job failed.",
    document: `query job_log_tail($fullPath: String!, $jobId: ID!, $lines: Int = 50) {
  project(fullPath: $fullPath) {
    job(id: $jobId) { restId name status failureReason webUrl trace(tailLines: $lines) }
  }
}`,
    arguments: { jobId: 'Numeric id of the job (restId in recent_pipelines or pipeline_jobs).', lines: 'How many lines from the end (default 50).' },
  },
  {
    description:
      "The newest posts of the caller's Hubzilla channel (or another channel of the same account), newest thread first: author, time, title and text, with their comments.",
    document: `query channel_stream($nickname: String, $first: Int = 10) {
  channel(nickname: $nickname) {
    nickname
    stream(first: $first, order: NEWEST_FIRST) {
      nodes { createdAt title text author { name address } comments { author { name } text } }
    }
  }
}`,
    arguments: { nickname: "A channel of the caller's account; the login's own channel when left out.", first: 'How many posts, 1 to 100 (default 10).' },
  },
  {
    description:
      "Posts to the caller's Hubzilla channel (or another channel of the same account). Adds a post; changes nothing that exists. A retry with the same messageId is the same post.",
    document: `mutation post_to_channel($body: String!, $title: String, $channel: String, $messageId: String) {
  channelItemPost(input: { body: $body, title: $title, channel: $channel, messageId: $messageId }) {
    item { messageId permalink createdAt }
    errors { message field code }
  }
}`,
    arguments: { body: 'The text of the post, in BBCode (plain text works).', messageId: 'A UUID of your own, so that a retry cannot post twice.' },
    destructive: false,
  },
];

/** Reads a manifest file: `{ "tools": [ToolEntry…] }`. */
export function readToolManifest(file: string): ToolEntry[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new McpToolsError(`MCP_TOOLS: ${file} cannot be read as JSON (${(error as Error).message.slice(0, 120)})`);
  }
  const tools = (parsed as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(tools)) throw new McpToolsError(`MCP_TOOLS: ${file} has no "tools" list`);
  return tools.map((entry, i) => {
    const e = entry as Partial<ToolEntry> | null;
    const named = typeof e?.document === 'string' || typeof e?.documentId === 'string';
    if (!e || !named || typeof e.description !== 'string' || e.description.trim() === '') {
      throw new McpToolsError(`MCP_TOOLS: ${file}, tool ${i + 1}, needs a "document" (or the "documentId" of a trusted document) and a "description"`);
    }
    return { description: e.description, document: e.document, documentId: e.documentId, arguments: e.arguments, destructive: e.destructive };
  });
}

/**
 * The tools of a manifest, checked against the schema; mutations only when
 * `mutations` is on. `trusted` finds the text of a trusted document an entry
 * names by `documentId`.
 */
export function buildTools(
  schema: GraphQLSchema,
  entries: readonly ToolEntry[],
  mutations: boolean,
  trusted: (id: string) => string | undefined = () => undefined,
): McpTool[] {
  const tools: McpTool[] = [];
  for (const entry of entries) {
    const text = entry.documentId === undefined ? entry.document : trusted(entry.documentId);
    if (text === undefined)
      throw new McpToolsError(`MCP tool with documentId "${String(entry.documentId).slice(0, 80)}": no trusted document has that id (PERSISTED_DOCUMENTS)`);
    let operation: OperationDefinitionNode | null;
    try {
      const document = parse(text);
      const errors = validate(schema, document);
      if (errors.length > 0) throw new Error(errors[0]?.message ?? 'invalid');
      operation = getOperationAST(document) ?? null;
    } catch (error) {
      throw new McpToolsError(`MCP tool "${text.slice(0, 60)}…": ${(error as Error).message.slice(0, 200)}`);
    }
    const name = operation?.name?.value;
    if (!operation || !name || operation.operation === 'subscription' || !/^[a-zA-Z0-9_-]{1,64}$/.test(name)) {
      throw new McpToolsError(`MCP tool "${text.slice(0, 60)}…": one named query or mutation, named with letters, digits, _ and -`);
    }
    const mutation = operation.operation === 'mutation';
    if (mutation && !mutations) continue;
    tools.push({
      name,
      description: entry.description,
      inputSchema: inputSchemaOf(schema, operation, entry.arguments ?? {}),
      document: text,
      documentId: entry.documentId ?? null,
      operationName: name,
      mutation,
      destructive: mutation && entry.destructive !== false,
    });
  }
  return tools;
}

/** The JSON Schema of an operation's variables: required where non-null without a default. */
function inputSchemaOf(schema: GraphQLSchema, operation: OperationDefinitionNode, described: Readonly<Record<string, string>>): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    if (!type) continue;
    const fallback = definition.defaultValue ? valueFromASTUntyped(definition.defaultValue) : undefined;
    properties[name] = {
      ...jsonSchemaOf(type),
      ...(described[name] ? { description: described[name] } : {}),
      ...(fallback === undefined || fallback === null ? {} : { default: fallback }),
    };
    if (isNonNullType(type) && !definition.defaultValue) required.push(name);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
}

const SCALARS: Readonly<Record<string, JsonSchema>> = {
  String: { type: 'string' },
  ID: { type: 'string' },
  Boolean: { type: 'boolean' },
  Int: { type: 'integer', minimum: -(2 ** 31), maximum: 2 ** 31 - 1 },
  Float: { type: 'number' },
  SafeInt: { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
  DateTime: { type: 'string', format: 'date-time' },
};

/**
 * An input type as JSON Schema. An optional value is one a caller leaves out (it is not `required`), not a
 * `["integer","null"]` union: some MCP clients refuse type arrays (the MCP Inspector warns of them).
 */
function jsonSchemaOf(type: GraphQLInputType): JsonSchema {
  const inner = isNonNullType(type) ? type.ofType : type;
  let schema: JsonSchema;
  if (isListType(inner)) schema = { type: 'array', items: jsonSchemaOf(inner.ofType) };
  else if (isEnumType(inner))
    schema = { type: 'string', enum: inner.getValues().map((v) => v.name), ...(inner.description ? { description: inner.description } : {}) };
  else if (isInputObjectType(inner)) {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const field of Object.values(inner.getFields())) {
      properties[field.name] = { ...jsonSchemaOf(field.type), ...(field.description ? { description: field.description } : {}) };
      if (isNonNullType(field.type) && field.defaultValue === undefined) required.push(field.name);
    }
    schema = { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
  } else if (isScalarType(inner)) {
    schema = SCALARS[inner.name] ?? (inner.description ? { description: inner.description } : {});
  } else schema = {};
  // An untyped scalar (JSON, Upload) takes anything.
  return getNamedType(type) === undefined ? {} : schema;
}
