/**
 * graphql-ws (the graphql-transport-ws protocol) on the HTTP server's port
 * and GraphQL path, run through Yoga's envelop, so WebSocket operations get
 * the same schema, context, plugins and error masking as HTTP ones.
 *
 * Credentials come from `connectionParams` under the header names used over
 * HTTP (`Private-Token`, `Authorization: Bearer …`, `Sudo`, `JOB-TOKEN`,
 * `X-Hubzilla-Authorization`; any case). When connectionParams carry none,
 * those headers of the upgrade request count instead: routers (Apollo
 * Router, Hive Router) forward a caller's headers there, and a browser page
 * cannot set them, so they are never ambient. Malformed ones refuse the
 * connection at connection_init (close 4403); so do missing or rejected
 * ones when credentials are required.
 *
 * Subscriptions are fanned out. Subscribers with the same credentials
 * (every credential header, compared whole) and the same operation (query,
 * operation name, variables, extensions) form one operation group: one
 * envelop execution, one context, one stream from the subscription hub;
 * each result is serialised once and written to every member's socket. A
 * subscriber joining a running group gets its own access check (a read with
 * those same credentials, shared with whoever joins at the same moment)
 * and the current state first, then the group's changes (the hub's
 * TopicStream tells who each result is for). Subscribers with other
 * credentials are in other groups: they never get each other's results.
 * Queries and mutations sent over the socket run one by one, as over HTTP.
 *
 * An idle subscriber costs its socket, a few small objects and a place in
 * its group: no context, no per-subscriber timer (one keep-alive wheel
 * pings every socket every 12 s and drops those that did not answer the
 * last ping), nothing kept of the upgrade request but its credential headers.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import {
  getOperationAST,
  GraphQLError,
  Kind,
  locatedError,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FieldNode,
  type GraphQLFormattedError,
  type OperationDefinitionNode,
} from 'graphql';
import { CloseCode, GRAPHQL_TRANSPORT_WS_PROTOCOL, handleProtocols, MessageType, parseMessage, stringifyMessage, type SubscribePayload } from 'graphql-ws';
import type { YogaServerInstance } from 'graphql-yoga';
import { WebSocket, WebSocketServer } from 'ws';
import { InputError } from '../errors.js';
import { type RequestScope, requestScopeFrom } from '../request-scope.js';
import type { ClientAddress } from './client-address.js';
import type { Context } from '../schema/context.js';
import { isAnonymous, type Credentials } from '../subscriptions/scope.js';
import type { SubscriptionHub } from '../subscriptions/hub.js';
import type { TopicStream } from '../subscriptions/topic.js';
import { gitlabCredentials, nearMissCredentials } from './credentials.js';
import { maskError } from './mask-error.js';
import { PersistedDocuments } from './persisted-documents.js';

export interface WebSocketOptions {
  server: Server;
  yoga: YogaServerInstance<Record<string, unknown>, Context>;
  /** Refuse connections without credentials (and, when `verify` is given, ones it rejects). */
  requireCredentials: boolean;
  /** Checks credentials upstream when they are required; false refuses the connection. */
  verify?: (credentials: Credentials) => Promise<boolean>;
  /** Trusted documents (PERSISTED_DOCUMENTS), when configured. */
  persisted?: PersistedDocuments | null;
  /** The client's address from the peer and X-Forwarded-For (client-address.ts). */
  clientAddress?: ClientAddress;
}

export interface WebSocketEndpoint {
  /** Open WebSocket connections. */
  readonly connections: number;
  /** Subscription operation groups running (one envelop execution each, however many members). */
  readonly groups: number;
  /** Closes every connection (ending their operations) and stops accepting new ones. */
  close(): Promise<void>;
}

/** Largest message a client may send: a query and its variables, not a file. */
const MAX_MESSAGE_BYTES = 1024 * 1024;
/** Operations one connection may run at once. */
const MAX_OPERATIONS = 100;
/** Time a client has to send connection_init after connecting. */
const CONNECTION_INIT_WAIT_MS = 3_000;
/** Every socket is pinged once per period; one that has not answered the previous ping by then is dropped. */
const KEEP_ALIVE_MS = 12_000;
/** The keep-alive wheel turns every tick, pinging one slot's sockets, so pings are spread over the period. */
const KEEP_ALIVE_TICK_MS = 100;
const KEEP_ALIVE_SLOTS = KEEP_ALIVE_MS / KEEP_ALIVE_TICK_MS;
/** Writes of one fan-out between two turns of the event loop (about 5 ms). */
const FANOUT_SLICE = 1_000;
/** A client that lets this much pile up unread is dropped rather than buffered without end. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** Header names read from connectionParams: GitLab's credentials and Hubzilla's. */
const CREDENTIAL_PARAMS = ['private-token', 'authorization', 'sudo', 'job-token', 'x-hubzilla-authorization'];

const TEXT = { binary: false } as const;

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

/** One subscriber: an operation of a connection that is (or is about to be) a member of a group. */
interface Member {
  readonly socket: GraphqlSocket;
  readonly id: string;
  group: Group | null;
}

/** A query or mutation run on its own, as over HTTP. */
interface Single {
  readonly controller: AbortController;
  iterator: AsyncIterator<ExecutionResult> | null;
}

/** The connection and its protocol state: ws makes the socket object, with our fields on it. */
class GraphqlSocket extends WebSocket {
  endpoint: Endpoint | null = null;
  initReceived = false;
  acknowledged = false;
  /** The headers to forward (credential headers only, lower-case names), and a digest naming them. */
  credentials: Record<string, string> | null = null;
  credentialKey = '';
  operations: Map<string, Member | Single> | null = null;
  answeredPing = true;
  slot = 0;
  initTimer: NodeJS.Timeout | null = null;
  /** The upgrade request's credential headers, for a connection_init whose connectionParams carry none. */
  upgradeCredentials: Record<string, string> = {};
  /** The upgrade request's id and trace context: every operation of the connection runs in it. */
  scope: RequestScope | null = null;
}

// Listeners shared by every socket (no closures per connection): `this` is the socket.
function onSocketMessage(this: WebSocket, data: Buffer | ArrayBuffer | Buffer[]): void {
  const socket = this as GraphqlSocket;
  socket.endpoint?.message(socket, String(data));
}

function onSocketClose(this: WebSocket): void {
  const socket = this as GraphqlSocket;
  socket.endpoint?.closed(socket);
}

function onSocketPong(this: WebSocket): void {
  (this as GraphqlSocket).answeredPing = true;
}

function onSocketError(this: WebSocket): void {
  this.terminate();
}

function isAsyncIterable<T>(value: unknown): value is AsyncIterable<T> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * A whole unmasked text frame (RFC 6455 5.2) holding `text`: the fan-out
 * builds it once per result and subscription id and writes the same bytes
 * to every member's socket.
 */
function textFrame(text: string): Buffer {
  const length = Buffer.byteLength(text);
  const header = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + length);
  frame[0] = 0x81;
  if (header === 2) frame[1] = length;
  else if (header === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  frame.write(text, header);
  return frame;
}

/** What ws keeps of a socket that a prebuilt frame may bypass it for (ws 8 internals, checked before each use). */
interface WsInternals {
  _socket?: { write(chunk: Buffer): boolean } | null;
  _sender?: { _state?: number } | null;
}

/** A result as graphql-ws sends it: data (and extensions) first, then the errors. */
function serialise(result: ExecutionResult): string {
  const { errors, ...rest } = result;
  return JSON.stringify(errors ? { ...rest, errors: errors.map((error) => error.toJSON()) } : rest);
}

/** Errors as an `error` message carries them; anything but a GraphQLError is masked. */
function errorPayload(error: unknown): GraphQLFormattedError[] {
  const errors = Array.isArray(error) ? (error as unknown[]) : [error];
  return errors.map((e) => (e instanceof GraphQLError ? e.toJSON() : { message: UNEXPECTED }));
}

const UNEXPECTED = 'Unexpected error.';

function rootField(operation: OperationDefinitionNode): FieldNode | null {
  const selection = operation.selectionSet.selections[0];
  return selection?.kind === Kind.FIELD ? selection : null;
}

/**
 * Subscribers with the same credentials and operation, sharing one envelop
 * execution and one hub stream. A result goes to the stream's members, or,
 * for a joiner's initial state, to the joiners alone.
 */
class Group {
  /** Every member, whatever its state (starting, joining, receiving). */
  private readonly members = new Set<Member>();
  /** Members that came while the execution was starting: they share its access check and its first state. */
  private pending: Member[] = [];
  private stream: TopicStream<unknown, Member> | null = null;
  private iterator: AsyncIterator<ExecutionResult> | null = null;
  /** The member that has the execution alone when it is not a hub stream (nothing to share). */
  private solo: Member | null = null;
  private ended = false;

  constructor(
    private readonly endpoint: Endpoint,
    readonly key: string,
    private readonly controller: AbortController,
    private readonly field: FieldNode | null,
  ) {}

  /** True until its execution gave its stream (or its refusal). */
  get starting(): boolean {
    return !this.ended && this.stream === null && this.solo === null;
  }

  /** True while further subscribers may join. */
  get open(): boolean {
    return !this.ended && this.solo === null && (this.stream === null || this.stream.joinable);
  }

  /** A further subscriber: while starting it waits for the first state; once running it joins the stream. */
  add(member: Member): void {
    member.group = this;
    this.members.add(member);
    if (!this.stream) {
      this.pending.push(member);
      return;
    }
    this.stream.join(member).catch((error: unknown) => {
      if (member.group !== this) return;
      member.group = null;
      this.members.delete(member);
      this.endpoint.finish(member, serialise({ errors: [this.locate(error)] }));
    });
  }

  /** A member unsubscribed or went away; the last one ends the execution. */
  remove(member: Member): void {
    if (member.group !== this) return;
    member.group = null;
    this.members.delete(member);
    const index = this.pending.indexOf(member);
    if (index >= 0) this.pending.splice(index, 1);
    this.stream?.leave(member);
    if (this.solo === member) this.solo = null;
    if (this.members.size === 0) this.stop();
  }

  /** Ends the execution: its stream, its context's signal. */
  stop(): void {
    if (this.ended) return;
    this.ended = true;
    this.endpoint.forget(this);
    void this.iterator?.return?.();
    this.controller.abort();
  }

  /** The start failed before any result: every member waiting gets `errors` as an error message. */
  refuse(errors: unknown): void {
    for (const member of this.take()) this.endpoint.fail(member, errors);
    this.stop();
  }

  /**
   * Runs the execution: `result` is what envelop's subscribe gave; `signal`
   * the one its context passed to the hub (a Request's signal follows the
   * one it was made with, but is not the same object).
   */
  async run(result: ExecutionResult | AsyncIterable<ExecutionResult>, signal: AbortSignal | undefined): Promise<void> {
    if (!isAsyncIterable<ExecutionResult>(result)) {
      // Refused before any stream (access, arguments, cost): every member waiting gets the answer.
      const message = serialise(result);
      for (const member of this.take()) this.endpoint.finish(member, message);
      this.stop();
      return;
    }
    this.iterator = result[Symbol.asyncIterator]();
    if (this.ended) {
      // Every member left while it started.
      void this.iterator.return?.();
      return;
    }
    const members = this.take();
    const payloads = members.map((member) => this.endpoint.started(member));
    const stream = (signal && this.endpoint.streamFor(signal)) as TopicStream<unknown, Member> | undefined;
    if (stream) {
      this.stream = stream;
      for (const member of members) stream.adopt(member);
    } else {
      // Not a hub stream: the first member has it alone, the others start their own.
      this.solo = members[0] ?? null;
      this.endpoint.forget(this);
      members.forEach((member, index) => {
        if (index === 0) return;
        member.group = null;
        this.members.delete(member);
        this.endpoint.restart(member, payloads[index]);
      });
    }
    if (this.members.size === 0) {
      this.stop();
      return;
    }
    try {
      for (;;) {
        const next = await this.iterator.next();
        if (next.done || this.ended) break;
        await this.send(serialise(next.value));
      }
    } catch (error) {
      for (const member of this.everyone()) this.endpoint.fail(member, error);
      this.stop();
      return;
    }
    for (const member of this.everyone()) this.endpoint.finish(member, null);
    this.stop();
  }

  /** The pending members still there; none pending afterwards. */
  private take(): Member[] {
    const members = this.pending.filter((member) => member.group === this);
    this.pending = [];
    return members;
  }

  private everyone(): Member[] {
    return [...this.members];
  }

  /** A joiner's access check failed: the error as the execution would have reported it for that field. */
  private locate(error: unknown): GraphQLError {
    const located = locatedError(error, this.field ? [this.field] : undefined, this.field ? [this.field.alias?.value ?? this.field.name.value] : undefined);
    return maskError(located, UNEXPECTED) as GraphQLError;
  }

  /**
   * One result to its audience; the frame is built once per subscription id
   * (clients tend to use the same ones). Thousands of writes are done in
   * slices, so requests and other groups get the event loop in between.
   */
  private async send(payload: string): Promise<void> {
    const audience: Iterable<Member> = this.solo ? [this.solo] : (this.stream?.lastAudience ?? this.stream?.members ?? []);
    let frames: Map<string, Buffer> | null = null;
    let lastId: string | null = null;
    let frame: Buffer | undefined;
    let written = 0;
    for (const member of audience) {
      if (member.group !== this) continue;
      if (member.id !== lastId) {
        frames ??= new Map();
        frame = frames.get(member.id);
        if (!frame) {
          frame = textFrame(`{"id":${JSON.stringify(member.id)},"type":"next","payload":${payload}}`);
          frames.set(member.id, frame);
        }
        lastId = member.id;
      }
      this.endpoint.writeFrame(member.socket, frame as Buffer);
      if (++written % FANOUT_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
}

class Endpoint {
  readonly wss: WebSocketServer;
  private readonly groups = new Map<string, Group>();
  /** Subscribe payloads of members whose group starts without a hub stream, kept only until they start their own. */
  private readonly payloads = new WeakMap<Member, SubscribePayload>();
  private readonly wheel: Set<GraphqlSocket>[] = Array.from({ length: KEEP_ALIVE_SLOTS }, () => new Set());
  private tick = 0;
  private nextSlot = 0;
  private ticker: NodeJS.Timeout | null = null;
  private closing = false;
  private hub: SubscriptionHub | null = null;

  constructor(private readonly options: WebSocketOptions) {
    this.wss = new WebSocketServer({
      server: options.server,
      path: options.yoga.graphqlEndpoint,
      maxPayload: MAX_MESSAGE_BYTES,
      // Compression would keep a zlib context per socket: hundreds of KB each, for small messages.
      perMessageDeflate: false,
      handleProtocols,
      WebSocket: GraphqlSocket,
    });
    this.wss.on('connection', (socket: GraphqlSocket, request: IncomingMessage) => this.opened(socket, request));
    // ws re-emits the HTTP server's errors (a busy port): listen() reports those, so they must not crash the process here.
    this.wss.on('error', () => {});
  }

  get connections(): number {
    return this.wss.clients.size;
  }

  get groupCount(): number {
    return this.groups.size;
  }

  streamFor(signal: AbortSignal): TopicStream<unknown, unknown> | undefined {
    return this.hub?.streamFor(signal);
  }

  private opened(socket: GraphqlSocket, request: IncomingMessage): void {
    socket.endpoint = this;
    socket.scope = requestScopeFrom(request.headers);
    for (const name of CREDENTIAL_PARAMS) {
      const value = request.headers[name];
      if (typeof value === 'string') socket.upgradeCredentials[name] = value;
    }
    socket.scope.clientAddress = this.options.clientAddress?.(request.socket.remoteAddress, request.headers['x-forwarded-for']);
    socket.on('message', onSocketMessage);
    socket.on('close', onSocketClose);
    socket.on('pong', onSocketPong);
    socket.on('error', onSocketError);
    if (socket.protocol !== GRAPHQL_TRANSPORT_WS_PROTOCOL) {
      socket.close(CloseCode.SubprotocolNotAcceptable, 'Subprotocol not acceptable');
      return;
    }
    if (this.closing) {
      socket.close(1001, 'Going away');
      return;
    }
    socket.initTimer = setTimeout(() => {
      socket.initTimer = null;
      if (!socket.initReceived) socket.close(CloseCode.ConnectionInitialisationTimeout, 'Connection initialisation timeout');
    }, CONNECTION_INIT_WAIT_MS);
    socket.slot = this.nextSlot;
    this.nextSlot = (this.nextSlot + 1) % KEEP_ALIVE_SLOTS;
    this.wheel[socket.slot]?.add(socket);
    this.ticker ??= setInterval(() => this.turn(), KEEP_ALIVE_TICK_MS).unref();
  }

  /** One tick of the keep-alive wheel: ping one slot's sockets, drop those that did not answer the last ping. */
  private turn(): void {
    const slot = this.wheel[this.tick];
    this.tick = (this.tick + 1) % KEEP_ALIVE_SLOTS;
    for (const socket of slot ?? []) {
      if (socket.readyState !== WebSocket.OPEN) continue;
      if (!socket.answeredPing) {
        socket.terminate();
        continue;
      }
      socket.answeredPing = false;
      socket.ping();
    }
  }

  closed(socket: GraphqlSocket): void {
    if (socket.initTimer) clearTimeout(socket.initTimer);
    socket.initTimer = null;
    this.wheel[socket.slot]?.delete(socket);
    if (this.wss.clients.size === 0 && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = null;
    }
    const operations = socket.operations;
    socket.operations = null;
    for (const operation of operations?.values() ?? []) this.stop(operation);
    socket.endpoint = null;
  }

  message(socket: GraphqlSocket, data: string): void {
    let message: ReturnType<typeof parseMessage>;
    try {
      message = parseMessage(data);
    } catch {
      socket.close(CloseCode.BadRequest, 'Invalid message received');
      return;
    }
    switch (message.type) {
      case MessageType.ConnectionInit:
        if (socket.initReceived) {
          socket.close(CloseCode.TooManyInitialisationRequests, 'Too many initialisation requests');
          return;
        }
        socket.initReceived = true;
        if (socket.initTimer) clearTimeout(socket.initTimer);
        socket.initTimer = null;
        this.connect(socket, message.payload).catch(() => socket.close(CloseCode.InternalServerError, 'Internal server error'));
        return;
      case MessageType.Ping:
        this.write(socket, stringifyMessage(message.payload ? { type: MessageType.Pong, payload: message.payload } : { type: MessageType.Pong }));
        return;
      case MessageType.Pong:
        return;
      case MessageType.Subscribe:
        if (!socket.acknowledged || !socket.operations) {
          socket.close(CloseCode.Unauthorized, 'Unauthorized');
          return;
        }
        if (socket.operations.has(message.id)) {
          socket.close(CloseCode.SubscriberAlreadyExists, `Subscriber for ${message.id} already exists`);
          return;
        }
        if (socket.operations.size >= MAX_OPERATIONS) {
          this.write(
            socket,
            stringifyMessage({
              id: message.id,
              type: MessageType.Error,
              payload: errorPayload(new GraphQLError(`At most ${MAX_OPERATIONS} operations may run on one connection.`)),
            }),
          );
          return;
        }
        this.subscribe(socket, message.id, message.payload);
        return;
      case MessageType.Complete: {
        const operation = socket.operations?.get(message.id);
        if (!operation) return;
        socket.operations?.delete(message.id);
        this.stop(operation);
        return;
      }
      default:
        socket.close(CloseCode.BadRequest, 'Invalid message received');
    }
  }

  private async connect(socket: GraphqlSocket, params: Record<string, unknown> | null | undefined): Promise<void> {
    let headers: Headers;
    try {
      headers = headersFromParams(params ?? undefined);
      if ([...headers.keys()].length === 0) headers = headersFromParams(socket.upgradeCredentials);
    } catch (error) {
      // The reason says what to send (a close reason holds at most 123 bytes).
      const reason =
        error instanceof InputError
          ? Buffer.from(error.message)
              .subarray(0, 123)
              .toString('utf8')
              .replace(/\uFFFD$/, '')
          : 'Forbidden';
      socket.close(CloseCode.Forbidden, reason);
      return;
    }
    const missed = nearMissCredentials(Object.keys(params ?? {}));
    if (missed.length > 0 && socket.scope) socket.scope.ignoredCredentials = missed;
    if (this.options.requireCredentials) {
      const credentials = gitlabCredentials(headers, new URL('http://localhost/'));
      if (isAnonymous(credentials) || (this.options.verify && !(await this.options.verify(credentials)))) {
        socket.close(CloseCode.Forbidden, 'Forbidden');
        return;
      }
    }
    if (socket.readyState !== WebSocket.OPEN) return;
    const credentials: Record<string, string> = {};
    for (const [name, value] of headers) credentials[name] = value;
    socket.credentials = credentials;
    // Names the whole credential set: members of one group send exactly the same credentials.
    const entries = Object.entries(credentials).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    socket.credentialKey = createHash('sha256').update(JSON.stringify(entries)).digest('base64url');
    socket.operations = new Map();
    socket.acknowledged = true;
    this.write(socket, stringifyMessage({ type: MessageType.ConnectionAck }));
  }

  private subscribe(socket: GraphqlSocket, id: string, payload: SubscribePayload): void {
    const member: Member = { socket, id, group: null };
    socket.operations?.set(id, member);
    const documentId = this.options.persisted ? (PersistedDocuments.idOf(payload) ?? '') : '';
    const key = `${socket.credentialKey}\n${documentId}\n${payload.operationName ?? ''}\n${JSON.stringify(payload.variables ?? null)}\n${JSON.stringify(payload.extensions ?? null)}\n${payload.query}`;
    const group = this.groups.get(key);
    if (group?.open) {
      if (group.starting) this.payloads.set(member, payload);
      group.add(member);
    } else this.start(member, payload, key);
  }

  /** A member's group runs: its subscribe payload is not needed any more. */
  started(member: Member): SubscribePayload | undefined {
    const payload = this.payloads.get(member);
    this.payloads.delete(member);
    return payload;
  }

  /** Starts a member that could not share its group's execution. */
  restart(member: Member, payload: SubscribePayload | undefined): void {
    if (payload && member.socket.operations?.get(member.id) === member) this.start(member, payload, null);
  }

  /**
   * Runs an operation through envelop: parse, validate, context, then
   * execute or subscribe. A subscription starts a group (under `key`, when
   * given) that later subscribers of the same operation join.
   */
  private start(member: Member, payload: SubscribePayload, key: string | null): void {
    const { socket, id } = member;
    const { yoga } = this.options;
    const controller = new AbortController();
    const request = new Request(`http://localhost${yoga.graphqlEndpoint}`, { method: 'POST', headers: socket.credentials ?? {}, signal: controller.signal });
    // The connection's request id; a span of the operation's own.
    const scope: RequestScope = { ...(socket.scope ?? requestScopeFrom({})) };
    const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({ params: payload, request, scope });
    // Trusted documents: the id names the document; a text is refused when only they may run.
    const resolved = this.options.persisted?.resolve(payload) ?? { query: payload.query, document: null };
    if ('error' in resolved) return this.fail(member, resolved.error);
    let document: DocumentNode;
    let operation: OperationDefinitionNode | null | undefined;
    try {
      document = resolved.document ?? parse(resolved.query);
      // A trusted document was validated at start.
      const errors = resolved.document ? [] : validate(schema, document);
      if (errors.length) return this.fail(member, errors);
      operation = getOperationAST(document, payload.operationName);
    } catch (error) {
      // A syntax error: an error message, not a closed socket.
      return this.fail(member, error);
    }
    if (!operation) return this.fail(member, new GraphQLError('Unable to identify operation'));
    const args = (contextValue: unknown): ExecutionArgs => ({
      schema,
      operationName: payload.operationName,
      document,
      variableValues: payload.variables,
      contextValue,
    });

    if (operation.operation === 'subscription') {
      const group = new Group(this, key ?? '', controller, rootField(operation));
      if (key !== null) {
        this.groups.set(key, group);
        this.payloads.set(member, payload);
      }
      group.add(member);
      void (async () => {
        try {
          const contextValue = await contextFactory();
          const live = (contextValue as Partial<Context>).live;
          this.hub ??= live?.hub ?? null;
          await group.run(await subscribe(args(contextValue)), live?.signal);
        } catch (error) {
          group.refuse(error);
        }
      })();
      return;
    }

    const single: Single = { controller, iterator: null };
    socket.operations?.set(id, single);
    const current = () => socket.operations?.get(id) === single;
    void (async () => {
      try {
        const result = await execute(args(await contextFactory()));
        if (!isAsyncIterable<ExecutionResult>(result)) {
          if (current()) this.next(socket, id, serialise(result));
        } else {
          single.iterator = result[Symbol.asyncIterator]();
          for (;;) {
            const next = await single.iterator.next();
            if (next.done || !current()) break;
            this.next(socket, id, serialise(next.value));
          }
        }
        if (current()) {
          socket.operations?.delete(id);
          this.write(socket, stringifyMessage({ id, type: MessageType.Complete }));
        }
      } catch (error) {
        if (!current()) return;
        socket.operations?.delete(id);
        this.write(socket, stringifyMessage({ id, type: MessageType.Error, payload: errorPayload(error) }));
      } finally {
        controller.abort();
      }
    })();
  }

  /** Ends a member's operation with an error message (it never started, or its execution failed). */
  fail(member: Member, errors: unknown): void {
    const { socket, id } = member;
    this.payloads.delete(member);
    if (socket.operations?.get(id) !== member) return;
    socket.operations.delete(id);
    this.write(socket, stringifyMessage({ id, type: MessageType.Error, payload: errorPayload(errors) }));
  }

  /** Ends a member's operation: `message` (a serialised result) first when given, then complete. */
  finish(member: Member, message: string | null): void {
    const { socket, id } = member;
    this.payloads.delete(member);
    if (socket.operations?.get(id) !== member) return;
    socket.operations.delete(id);
    if (message !== null) this.next(socket, id, message);
    this.write(socket, stringifyMessage({ id, type: MessageType.Complete }));
  }

  forget(group: Group): void {
    if (this.groups.get(group.key) === group) this.groups.delete(group.key);
  }

  private next(socket: GraphqlSocket, id: string, payload: string): void {
    this.write(socket, `{"id":${JSON.stringify(id)},"type":"next","payload":${payload}}`);
  }

  /** Writes a text frame; a client that stopped reading is dropped instead of buffered without end. */
  write(socket: GraphqlSocket, data: Buffer | string): void {
    if (socket.readyState !== WebSocket.OPEN) return;
    if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
      socket.terminate();
      return;
    }
    socket.send(data, TEXT);
  }

  /**
   * Writes a prebuilt frame: straight to the TCP socket while ws has nothing
   * of its own under way (no compression, no queued send: its sender is idle),
   * which saves ws framing it again for each of thousands of members; else
   * through ws.
   */
  writeFrame(socket: GraphqlSocket, frame: Buffer): void {
    if (socket.readyState !== WebSocket.OPEN) return;
    if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
      socket.terminate();
      return;
    }
    const { _socket: raw, _sender: sender } = socket as unknown as WsInternals;
    if (raw && sender?._state === 0) raw.write(frame);
    else socket.send(frame.subarray(frame[1] === 126 ? 4 : frame[1] === 127 ? 10 : 2), TEXT);
  }

  private stop(operation: Member | Single): void {
    if ('controller' in operation) {
      void operation.iterator?.return?.();
      operation.controller.abort();
      return;
    }
    this.payloads.delete(operation);
    operation.group?.remove(operation);
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const socket of this.wss.clients) socket.close(1001, 'Going away');
    for (const group of [...this.groups.values()]) group.stop();
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

export function attachWebSocket(options: WebSocketOptions): WebSocketEndpoint {
  const endpoint = new Endpoint(options);
  return {
    get connections() {
      return endpoint.connections;
    },
    get groups() {
      return endpoint.groupCount;
    },
    close: () => endpoint.close(),
  };
}
