/**
 * graphql-ws (the graphql-transport-ws protocol) on the HTTP server's port
 * and GraphQL path, wired to Yoga's envelop as Yoga's docs show, so
 * WebSocket operations get the same schema, context, plugins and error
 * masking as HTTP ones.
 *
 * Credentials come from `connectionParams` under the header names used over
 * HTTP (`Private-Token`, `Authorization: Bearer …`, `Sudo`, `JOB-TOKEN`;
 * any case). Malformed ones refuse the connection at connection_init (close
 * 4403); so do missing or rejected ones when credentials are required.
 * Each operation gets a Request carrying those headers and its own abort
 * signal, which fires when the operation completes or the socket closes,
 * so the operation's upstream reads and its subscription stop with it.
 */
import type { Server } from 'node:http';
import { GraphQLError, type ExecutionArgs } from 'graphql';
import type { Context as WsContext } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import type { YogaServerInstance } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import { InputError } from '../errors.js';
import type { Context } from '../schema/context.js';
import { isAnonymous, type Credentials } from '../subscriptions/scope.js';
import { gitlabCredentials } from './credentials.js';

export interface WebSocketOptions {
  server: Server;
  yoga: YogaServerInstance<Record<string, unknown>, Context>;
  /** Refuse connections without credentials (and, when `verify` is given, ones it rejects). */
  requireCredentials: boolean;
  /** Checks credentials upstream when they are required; false refuses the connection. */
  verify?: (credentials: Credentials) => Promise<boolean>;
}

export interface WebSocketEndpoint {
  /** Open WebSocket connections. */
  readonly connections: number;
  /** Closes every connection (ending their operations) and stops accepting new ones. */
  close(): Promise<void>;
}

/** Largest message a client may send: a query and its variables, not a file. */
const MAX_MESSAGE_BYTES = 1024 * 1024;
/** Operations one connection may run at once. */
const MAX_OPERATIONS = 100;

type Ctx = WsContext<Record<string, unknown> | undefined, Extra>;

/** Header names read from connectionParams: GitLab's credentials and Hubzilla's. */
const CREDENTIAL_PARAMS = ['private-token', 'authorization', 'sudo', 'job-token', 'x-hubzilla-authorization'];

/** The credential headers in connectionParams (any case); throws InputError for malformed ones. */
export function headersFromParams(params: Readonly<Record<string, unknown>> | undefined): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(params ?? {})) {
    if (!CREDENTIAL_PARAMS.includes(name.toLowerCase())) continue;
    if (typeof value !== 'string') throw new InputError(`connectionParams.${name} must be a string.`, [name]);
    try {
      headers.set(name, value);
    } catch {
      throw new InputError(`The ${name.toLowerCase()} credential is malformed.`, [name]);
    }
  }
  // Validates the GitLab ones the way HTTP requests are validated.
  gitlabCredentials(headers, new URL('http://localhost/'));
  return headers;
}

export function attachWebSocket(options: WebSocketOptions): WebSocketEndpoint {
  const { yoga } = options;
  const wss = new WebSocketServer({ server: options.server, path: yoga.graphqlEndpoint, maxPayload: MAX_MESSAGE_BYTES });
  const headersOf = new WeakMap<object, Headers>();
  const operationsOf = new WeakMap<object, Map<string, AbortController>>();

  const abortAll = (ctx: Ctx) => {
    for (const controller of operationsOf.get(ctx)?.values() ?? []) controller.abort();
    operationsOf.delete(ctx);
  };

  const disposable = useServer(
    {
      isProd: true,
      execute: (args: ExecutionArgs) => (args.rootValue as { execute: (a: ExecutionArgs) => never }).execute(args),
      subscribe: (args: ExecutionArgs) => (args.rootValue as { subscribe: (a: ExecutionArgs) => never }).subscribe(args),
      onConnect: async (ctx: Ctx) => {
        let headers: Headers;
        try {
          headers = headersFromParams(ctx.connectionParams);
        } catch {
          return false;
        }
        const credentials = gitlabCredentials(headers, new URL('http://localhost/'));
        if (options.requireCredentials) {
          if (isAnonymous(credentials)) return false;
          if (options.verify && !(await options.verify(credentials))) return false;
        }
        headersOf.set(ctx, headers);
        operationsOf.set(ctx, new Map());
        return true;
      },
      onSubscribe: async (ctx: Ctx, id, payload) => {
        const operations = operationsOf.get(ctx);
        if (!operations) return [new GraphQLError('The connection is not initialised.')];
        if (operations.size >= MAX_OPERATIONS) return [new GraphQLError(`At most ${MAX_OPERATIONS} operations may run on one connection.`)];
        const controller = new AbortController();
        const request = new Request(`http://localhost${yoga.graphqlEndpoint}`, {
          method: 'POST',
          headers: headersOf.get(ctx) ?? {},
          signal: controller.signal,
        });
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params: payload,
          request,
        });
        try {
          const document = parse(payload.query);
          const errors = validate(schema, document);
          if (errors.length) return errors;
          const args: ExecutionArgs = {
            schema,
            operationName: payload.operationName,
            document,
            variableValues: payload.variables,
            contextValue: await contextFactory(),
            rootValue: { execute, subscribe },
          };
          operations.set(id, controller);
          return args;
        } catch (error) {
          // A syntax error or a context that refuses the credentials: an error message, not a closed socket.
          if (error instanceof GraphQLError) return [error];
          throw error;
        }
      },
      onComplete: (ctx: Ctx, id) => {
        const operations = operationsOf.get(ctx);
        operations?.get(id)?.abort();
        operations?.delete(id);
      },
      onClose: (ctx: Ctx) => abortAll(ctx),
    },
    wss,
  );

  return {
    get connections() {
      return wss.clients.size;
    },
    close: async () => {
      for (const socket of wss.clients) socket.close(1001, 'Going away');
      await disposable.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
