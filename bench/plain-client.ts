/**
 * The plain REST client as a process: a node:http server that answers each
 * workload's GraphQL request (picked by operation name; the query text is not
 * parsed) by making the identical REST calls itself with undici and returning
 * the same JSON as the gateway. The benchmark drives it exactly as it drives
 * the gateway, so their ratio is the gateway's cost.
 *
 *   node --import tsx bench/plain-client.ts --gitlab URL --hubzilla URL --connections 64
 *
 * Prints `{"url": "http://127.0.0.1:PORT/graphql"}` once listening; SIGTERM stops it.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { parseArgs } from 'node:util';
import { ANSWERS } from './plain/answers.js';
import { createRestClient } from './plain/rest.js';
import { serveReference } from './plain/serve.js';

const { values } = parseArgs({
  options: {
    gitlab: { type: 'string' },
    hubzilla: { type: 'string' },
    connections: { type: 'string', default: '64' },
  },
});
if (!values.gitlab || !values.hubzilla) throw new Error('--gitlab and --hubzilla are required');
const rest = createRestClient({ gitlabUrl: values.gitlab, hubzillaUrl: values.hubzilla, connections: Number(values.connections) });

async function readJson(req: IncomingMessage): Promise<{ operationName?: string; query?: string }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as { operationName?: string; query?: string };
}

/** The credentials to forward: GitLab's Private-Token as is, Hubzilla's X-Hubzilla-Authorization as Authorization. */
function credentials(req: IncomingMessage): Record<string, string> {
  const token = req.headers['private-token'];
  const hubzilla = req.headers['x-hubzilla-authorization'];
  if (typeof token === 'string') return { 'private-token': token };
  if (typeof hubzilla === 'string') return { authorization: hubzilla };
  return {};
}

const server = createServer((req, res) => {
  void (async () => {
    try {
      const body = await readJson(req);
      const name = body.operationName ?? /^(?:query) (\w+)/m.exec(body.query ?? '')?.[1] ?? '';
      const answer = ANSWERS[name];
      if (!answer) throw new Error(`no plain answer for operation "${name}"`);
      const data = await answer(rest.withCredentials(credentials(req)));
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ data }));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ message }] }));
    }
  })();
});
await serveReference(server, rest);
