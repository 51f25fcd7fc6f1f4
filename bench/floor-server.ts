/**
 * The floor under bench:dashboard's warm refreshes: a node:http server that
 * reads each POST whole and parses it, as any server must, then writes the
 * bytes of one answer (the gateway's, from a file) and does nothing else.
 * `/metrics` is empty: it keeps no warm answers to count.
 *
 *   node dist/bench/floor-server.js --body FILE
 *
 * Prints `{"url": "http://127.0.0.1:PORT/graphql"}` once listening; SIGTERM stops it.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { serveReference } from './plain/serve.js';

const { values } = parseArgs({ options: { body: { type: 'string' } } });
if (!values.body) throw new Error('--body is required');
const body = readFileSync(values.body);

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.method === 'POST') JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const metrics = req.url?.startsWith('/metrics') ?? false;
    res.writeHead(200, { 'content-type': metrics ? 'text/plain' : 'application/json', 'content-length': metrics ? 0 : body.length });
    res.end(metrics ? '' : body);
  });
});
await serveReference(server);
