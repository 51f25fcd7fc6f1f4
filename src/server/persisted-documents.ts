/**
 * Trusted documents (PERSISTED_DOCUMENTS): operations a frontend was built
 * with, accepted by id, and with PERSISTED_DOCUMENTS_ONLY the only operations
 * accepted at all. Read once at start from a JSON file, or every `.json` file
 * of a folder, in any of the formats the tools write:
 *
 * - Relay (`persistConfig` in relay.config.json, the former `--persist-output`)
 *   and GraphQL Codegen's client preset (`persistedDocuments`): an object of
 *   id -> document text;
 * - Apollo's persisted query manifest: `{ format, version, operations: [{ id, body }] }`.
 *
 * A request names its document as `documentId` (the GraphQL-over-HTTP
 * proposal), `doc_id` or `id` (Relay's examples), or
 * `extensions.persistedQuery.sha256Hash` (Apollo's and Codegen's clients),
 * over HTTP (in a GET's URL too: `?documentId=…&variables=…`, a cacheable
 * address) and over graphql-ws alike. Every document is parsed and validated
 * against the schema at start, so a stale set fails the start, not a user.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { type DocumentNode, type GraphQLError, type GraphQLSchema, parse, validate } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';

/** A document set that cannot be used: the message names the file and the id. */
export class PersistedDocumentsError extends Error {
  override readonly name = 'PersistedDocumentsError';
}

/** What a request may carry to name a document. */
export interface DocumentRequest {
  query?: string | null;
  documentId?: unknown;
  doc_id?: unknown;
  id?: unknown;
  extensions?: unknown;
}

/** The outcome of looking a request's document up: its text, or the error the caller sees. */
export type Resolved = { query: string; document: DocumentNode | null } | { error: GraphQLError };

const ID = /^[A-Za-z0-9:._-]{1,128}$/;

export class PersistedDocuments {
  private readonly documents = new Map<string, { text: string; document: DocumentNode }>();

  /** `only`: refuse any operation sent as text. */
  constructor(
    readonly only: boolean,
    entries: Iterable<[string, string, string]>,
    schema: GraphQLSchema,
  ) {
    for (const [id, text, source] of entries) {
      if (!ID.test(id)) throw new PersistedDocumentsError(`${source}: "${id.slice(0, 80)}" is not a document id (letters, digits, : . _ -; at most 128)`);
      const known = this.documents.get(id);
      if (known && known.text !== text) throw new PersistedDocumentsError(`${source}: id ${id} names two different documents`);
      let document: DocumentNode;
      try {
        document = parse(text);
      } catch (error) {
        throw new PersistedDocumentsError(`${source}: document ${id} does not parse: ${(error as Error).message}`);
      }
      const errors = validate(schema, document);
      if (errors.length) throw new PersistedDocumentsError(`${source}: document ${id} does not fit the schema: ${errors[0]?.message}`);
      this.documents.set(id, { text, document });
    }
  }

  get size(): number {
    return this.documents.size;
  }

  /** The id a request names, if any. */
  static idOf(request: DocumentRequest): string | null {
    for (const value of [request.documentId, request.doc_id, request.id]) if (typeof value === 'string' && value) return value;
    const persisted = (request.extensions as { persistedQuery?: { sha256Hash?: unknown } } | null | undefined)?.persistedQuery;
    return typeof persisted?.sha256Hash === 'string' && persisted.sha256Hash ? persisted.sha256Hash : null;
  }

  /** The id an HTTP request names: in its parameters, or for a GET in its URL, which Yoga reads only the standard parameters of. */
  static idOfHttp(params: DocumentRequest, request: Request): string | null {
    const id = PersistedDocuments.idOf(params);
    if (id !== null || request.method !== 'GET') return id;
    const search = new URL(request.url).searchParams;
    return PersistedDocuments.idOf({ documentId: search.get('documentId'), doc_id: search.get('doc_id'), id: search.get('id') });
  }

  /** The text of the document `id` names; undefined when the set has none. */
  textOf(id: string): string | undefined {
    return this.documents.get(id)?.text;
  }

  /** The document a request runs: its own text when allowed, else the one its id names. */
  resolve(request: DocumentRequest): Resolved {
    const id = PersistedDocuments.idOf(request);
    if (request.query) {
      if (this.only) return { error: onlyError() };
      return { query: request.query, document: null };
    }
    if (id === null) return { error: this.only ? onlyError() : missingError() };
    const found = this.documents.get(id);
    if (!found) return { error: notFoundError(id) };
    return { query: found.text, document: found.document };
  }

  /** The Yoga plugin (HTTP and SSE): documents by id, and text only when allowed. */
  plugin(): Plugin {
    return usePersistedOperations({
      getPersistedOperation: (id) => this.documents.get(id)?.document ?? null,
      allowArbitraryOperations: !this.only,
      extractPersistedOperationId: (params, request) => PersistedDocuments.idOfHttp(params as DocumentRequest, request),
      // Validated against the schema at start.
      skipDocumentValidation: true,
      customErrors: {
        notFound: (payload) => notFoundError(PersistedDocuments.idOfHttp(payload.params as DocumentRequest, payload.request) ?? ''),
        keyNotFound: () => (this.only ? onlyError() : missingError()),
        persistedQueryOnly: () => onlyError(),
      },
    }) as Plugin;
  }
}

function onlyError(): GraphQLError {
  return createGraphQLError(
    'This gateway runs trusted documents only: send the id of a persisted document (documentId, doc_id, id or extensions.persistedQuery.sha256Hash) instead of a query.',
    { extensions: { code: 'PERSISTED_QUERY_ID_REQUIRED', http: { status: 400 } } },
  );
}

function missingError(): GraphQLError {
  return createGraphQLError('Send a query, or the id of a persisted document.', { extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } });
}

function notFoundError(id: string): GraphQLError {
  const shown = ID.test(id) ? `"${id}" ` : '';
  return createGraphQLError(`The document id ${shown}is not one of this gateway's trusted documents.`, {
    extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST', http: { status: 400 } },
  });
}

/** Reads a file, or every `.json` file of a folder (in name order), into id, text and source triples. */
export function readPersistedDocuments(path: string): [string, string, string][] {
  let files: string[];
  try {
    files = statSync(path).isDirectory()
      ? readdirSync(path)
          .filter((name) => name.endsWith('.json'))
          .sort()
          .map((name) => join(path, name))
      : [path];
  } catch {
    throw new PersistedDocumentsError(`${path}: cannot be read (PERSISTED_DOCUMENTS names a missing file or folder)`);
  }
  if (files.length === 0) throw new PersistedDocumentsError(`${path}: the folder holds no .json file`);
  const entries: [string, string, string][] = [];
  for (const file of files) {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      throw new PersistedDocumentsError(`${file}: not a JSON file`);
    }
    entries.push(...entriesOf(json, file));
  }
  return entries;
}

function entriesOf(json: unknown, file: string): [string, string, string][] {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new PersistedDocumentsError(`${file}: expected an object of id -> document`);
  const manifest = json as { format?: unknown; operations?: unknown };
  if (manifest.format === 'apollo-persisted-query-manifest') {
    if (!Array.isArray(manifest.operations)) throw new PersistedDocumentsError(`${file}: the manifest has no operations list`);
    return manifest.operations.map((operation: { id?: unknown; body?: unknown }, index) => {
      if (typeof operation?.id !== 'string' || typeof operation.body !== 'string') {
        throw new PersistedDocumentsError(`${file}: operation ${index} needs a string id and body`);
      }
      return [operation.id, operation.body, file];
    });
  }
  return Object.entries(json).map(([id, text]) => {
    if (typeof text !== 'string') throw new PersistedDocumentsError(`${file}: the document of ${id.slice(0, 80)} is not a string`);
    return [id, text, file];
  });
}
