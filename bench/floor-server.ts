/**
 * The floors under bench:dashboard's warm refreshes: a node:http server that
 * reads each POST whole and parses it, as any server must, then writes the
 * bytes of one answer (the gateway's, from a file) and does nothing else;
 * or (--yoga) a Yoga server whose one plugin answers every operation with
 * those bytes, as the gateway sends a warm answer through Yoga: what Yoga's
 * own request and response handling cost. `/metrics` is empty: neither
 * keeps warm answers to count.
 *
 *   node dist/bench/floor-server.js --body FILE [--yoga]
 *
 * Prints `{"url": "http://127.0.0.1:PORT/graphql"}` once listening; SIGTERM stops it.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { serveReference } from './plain/serve.js';

const { values } = parseArgs({ options: { body: { type: 'string' }, yoga: { type: 'boolean', default: false } } });
if (!values.body) throw new Error('--body is required');
const body = readFileSync(values.body);

/** What warm-answers.ts does for a warm answer: the operation is not run, and the bytes go in place of the empty text. */
const sendBytes: Plugin = {
  onParams: ({ setResult }) => setResult({ stringify: () => '' } as Parameters<typeof setResult>[0]),
  onResponse: ({ response, setResponse, fetchAPI }) => {
    const headers = new fetchAPI.Headers(response.headers);
    headers.delete('content-length');
    setResponse(new fetchAPI.Response(body, { status: response.status, headers }));
  },
};
const yoga = createYoga({ schema: createSchema({ typeDefs: 'type Query { unused: Int }' }), landingPage: false, graphiql: false, plugins: [sendBytes] });

const bare = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.method === 'POST') JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const metrics = req.url?.startsWith('/metrics') ?? false;
    res.writeHead(200, { 'content-type': metrics ? 'text/plain' : 'application/json', 'content-length': metrics ? 0 : body.length });
    res.end(metrics ? '' : body);
  });
});
await serveReference(values.yoga ? createServer((req, res) => (req.url?.startsWith('/metrics') ? bare.emit('request', req, res) : void yoga(req, res))) : bare);
