/**
 * Subscriptions over HTTP as Apollo's clients ask for them: Apollo Client's
 * default HttpLink and Apollo iOS send a subscription with `Accept:
 * multipart/mixed;boundary="graphql";subscriptionSpec=1.0` (the parameters
 * quoted or not), the protocol Apollo Router serves. graphql-yoga answers
 * multipart for @defer and @stream only, so such a subscription got 406.
 *
 * Here each event is a part `{"payload": <result>}`, a heartbeat `{}` goes
 * out every 5 s (as Apollo Router sends them), a failure of the stream itself
 * is `{"payload": null, "errors": [...]}`, and the closing boundary ends it.
 * Everything before the framing (credentials, limits, request ids, the
 * initial state) is the same operation Yoga runs for SSE. Written here
 * because no library serves this framing for Yoga; the test runs
 * @apollo/client's own HttpLink against it.
 */
import type { Plugin } from 'graphql-yoga';
import { streamError } from './mask-error.js';

/** What Apollo's clients put in Accept for a subscription: multipart with the subscription spec, version 1.0. */
const SUBSCRIPTION_SPEC = /multipart\/mixed[^,]*;\s*subscriptionSpec\s*=\s*"?1\.0"?/i;
/** Between two heartbeats when no event comes: Apollo Router's interval. */
export const HEARTBEAT_MS = 5_000;
const BOUNDARY = 'graphql';

/** One part of the body: the boundary, its header, the JSON. */
function part(json: string): string {
  return `\r\n--${BOUNDARY}\r\ncontent-type: application/json; charset=utf-8\r\n\r\n${json}`;
}

/** Serves a subscription whose request accepts Apollo's multipart subscription protocol in that protocol. */
export function useMultipartSubscriptions(heartbeatMs = HEARTBEAT_MS): Plugin {
  const subscriptions = new WeakSet<Request>();
  return {
    onSubscribe({ args }) {
      const request = (args.contextValue as { request?: Request }).request;
      if (request) subscriptions.add(request);
    },
    onResultProcess({ request, setResultProcessor }) {
      if (!subscriptions.has(request) || !SUBSCRIPTION_SPEC.test(request.headers.get('accept') ?? '')) return;
      setResultProcessor((result, fetchAPI) => {
        const encoder = new fetchAPI.TextEncoder();
        let closed = false;
        let timer: ReturnType<typeof setInterval> | undefined;
        let iterator: AsyncIterator<unknown> | undefined;
        const body = new fetchAPI.ReadableStream<Uint8Array>({
          start(controller) {
            const send = (text: string) => {
              if (!closed) controller.enqueue(encoder.encode(text));
            };
            const end = () => {
              if (timer) clearInterval(timer);
              send(`\r\n--${BOUNDARY}--\r\n`);
              if (!closed) controller.close();
              closed = true;
            };
            if (!(Symbol.asyncIterator in Object(result))) {
              // Refused before it began (a bad document, no credentials): one part with the errors, then the end.
              send(part(JSON.stringify({ payload: result })));
              end();
              return;
            }
            iterator = (result as AsyncIterable<unknown>)[Symbol.asyncIterator]();
            timer = setInterval(() => send(part('{}')), heartbeatMs);
            void (async () => {
              try {
                for (;;) {
                  const next = await (iterator as AsyncIterator<unknown>).next();
                  if (next.done || closed) break;
                  send(part(JSON.stringify({ payload: next.value })));
                }
              } catch (error) {
                send(part(JSON.stringify({ payload: null, errors: [streamError(error)] })));
              } finally {
                end();
              }
            })();
          },
          cancel() {
            // The client went away: nothing is sent any more, and the subscription's polls stop with its stream.
            closed = true;
            if (timer) clearInterval(timer);
            void iterator?.return?.();
          },
        });
        return new fetchAPI.Response(body, {
          status: 200,
          headers: { 'content-type': `multipart/mixed;boundary="${BOUNDARY}";subscriptionSpec="1.0"`, 'cache-control': 'no-cache', connection: 'keep-alive' },
        });
      }, 'multipart/mixed');
    },
  };
}
