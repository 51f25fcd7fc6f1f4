/**
 * Replays: a GraphQL request over HTTP the same as one answered before from
 * a kept text (warm-answers.ts), in everything that can change its answer
 * (method, URL, every header but those that name the request itself, and
 * the body, byte for byte), gets what Yoga sent then: the same status,
 * headers and bytes, with `Cache-Control` worked out again. It is sent only
 * while the answer kept for it stands for this caller, judged as a request
 * through Yoga would judge it (aged-out reads sent again with the caller's
 * own credentials); anything else goes through Yoga, which takes up what
 * was found here instead of reading again.
 *
 * Why not through Yoga: in `npm run bench:dashboard` a Yoga server whose one
 * plugin sends the same kept bytes costs 2.05 ms of CPU per warm refresh, a
 * bare node:http server 0.78 ms (the `floor` runs): Yoga's request and
 * response handling was more than the rest of a warm answer's cost.
 *
 * Keys are an HMAC (the fleet's key secret) of the request: nothing kept
 * names a credential. Kept in this process only, bounded in bytes.
 */
import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { RequestScope } from '../request-scope.js';
import { answerCacheControl } from './cache-headers.js';
import type { CallerRequest, WarmAnswers } from './warm-answers.js';

/** Request headers that name the request, not what it asks: a client may send new ones every time. */
const PER_REQUEST = new Set(['x-request-id', 'traceparent', 'tracestate']);
/** Response headers not replayed: node:http writes its own, and x-request-id and Cache-Control are this request's. */
const NOT_REPLAYED = new Set(['cache-control', 'connection', 'content-length', 'date', 'keep-alive', 'transfer-encoding', 'x-request-id']);

/** What a request was answered with, and what it was answered from. */
interface Replay {
  /** The kept answer's key and operation (warm-answers.ts). */
  key: string;
  operation: string;
  /** The validator of the text sent. */
  etag: string;
  /** Whether the request had an If-None-Match: its status holds only while the kept answer has the same text. */
  conditional: boolean;
  callerAge: number | undefined;
  /** 200, or 304 where the request's If-None-Match named the text. */
  status: number;
  headers: Record<string, string>;
}

export interface WarmReplaysOptions {
  warm: WarmAnswers;
  keySecret: string;
  /** Bytes the replays may hold, least recently used out first. */
  maxBytes: number;
  /** Hears of each request answered by a replay. */
  onReplayed?: () => void;
}

export class WarmReplays {
  private readonly replays: LRUCache<string, Replay>;
  /** Each request's key among the replays, worked out before Yoga, for the plugin that keeps what Yoga sent. */
  private readonly signatures = new WeakMap<IncomingMessage, string>();

  constructor(private readonly options: WarmReplaysOptions) {
    this.replays = new LRUCache<string, Replay>({
      maxSize: Math.max(1, Math.floor(options.maxBytes)),
      sizeCalculation: (replay) => {
        let size = 300 + replay.operation.length;
        for (const name in replay.headers) size += name.length + (replay.headers[name]?.length ?? 0);
        return size;
      },
    });
  }

  /**
   * Answers `req` (its body, if a POST, already read into `req.body`) as the
   * same request was answered before, when its kept answer still stands:
   * true once sent. False, having sent nothing, where Yoga is to answer it.
   */
  async serve(req: IncomingMessage, res: ServerResponse, scope: RequestScope): Promise<boolean> {
    if ((req.method !== 'GET' && req.method !== 'POST') || !this.options.warm.keeping) return false;
    const started = performance.now();
    const signature = this.signatureOf(req);
    this.signatures.set(req, signature);
    const replay = this.replays.get(signature);
    if (replay === undefined) return false;
    const caller = callerOf(req, res);
    const { warm } = this.options;
    let standing: Awaited<ReturnType<WarmAnswers['standingFor']>>;
    try {
      standing = await warm.standingFor(replay.key, replay.operation, replay.callerAge, caller, scope);
    } catch {
      // Yoga judges it again, and answers whatever went wrong as it would.
      return false;
    }
    if (standing === undefined) return false;
    // To be built again or patched, or another text where the request's If-None-Match named the one sent: Yoga answers, from what was found here.
    if (standing === null || 'run' in standing || (replay.conditional && standing.answer.etag !== replay.etag)) {
      warm.handOver(scope, replay.key, standing);
      return false;
    }
    warm.served(standing.answer, standing.outcome, caller, started);
    this.options.onReplayed?.();
    // Another scope's text (shared) is sent with the same headers: only its validator differs (GET only).
    // Only a GET's Cache-Control reads the age its sources have left (a POST's is no-store): not worked out for a POST.
    const fresh = req.method === 'GET' ? { freshForMs: warm.freshForMs(standing.answer) } : undefined;
    const headers: Record<string, string> = { ...replay.headers, 'cache-control': answerCacheControl(req.method, 200, fresh) };
    if (headers.etag !== undefined) headers.etag = standing.answer.etag;
    if (replay.status === 304) {
      res.writeHead(304, headers);
      res.end();
    } else {
      res.writeHead(200, { ...headers, 'content-length': String(standing.body.length) });
      res.end(standing.body);
    }
    return true;
  }

  /** Keeps what Yoga sent for a request answered from a kept text: goes after every plugin that changes a response. */
  plugin(): Plugin {
    return {
      onResponse: ({ request, response, serverContext }) => {
        // node:http's request, as the adapter hands it on (the scope there may be the operation's own copy by now).
        const req = (serverContext as { req?: IncomingMessage } | undefined)?.req;
        const signature = req && this.signatures.get(req);
        if (req === undefined || signature === undefined) return;
        this.signatures.delete(req);
        if (response.status !== 200 && response.status !== 304) return;
        const replayable = this.options.warm.replayable(request);
        if (replayable === null) return;
        const headers: Record<string, string> = {};
        for (const [name, value] of response.headers) if (!NOT_REPLAYED.has(name)) headers[name] = value;
        this.replays.set(signature, { ...replayable, conditional: request.headers.has('if-none-match'), status: response.status, headers });
      },
    };
  }

  /** The request's key among the replays: its method, URL, headers (in the order sent) and body. */
  private signatureOf(req: IncomingMessage): string {
    const hmac = createHmac('sha256', this.options.keySecret);
    hmac.update(`${req.method} ${req.url}\n`);
    const raw = req.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = (raw[i] as string).toLowerCase();
      if (!PER_REQUEST.has(name)) hmac.update(`${name}: ${raw[i + 1]}\n`);
    }
    // A blank line between headers and body, as in HTTP: no header can take part of a body's place.
    hmac.update('\n');
    const body = (req as IncomingMessage & { body?: Buffer }).body;
    if (body !== undefined) hmac.update(body);
    return hmac.digest('base64url');
  }
}

/** The request as a reread sees it (its credentials), with a signal that aborts once its client is gone, made only if asked for. */
function callerOf(req: IncomingMessage, res: ServerResponse): CallerRequest {
  let controller: AbortController | undefined;
  return {
    headers: {
      get: (name) => {
        const value = req.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
      },
    },
    url: `http://gateway${req.url ?? '/'}`,
    get signal() {
      if (controller === undefined) {
        const made = new AbortController();
        controller = made;
        res.once('close', () => {
          if (!res.writableFinished) made.abort();
        });
      }
      return controller.signal;
    },
  };
}
