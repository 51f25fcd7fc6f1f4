/**
 * The hand-made Yoga + DataLoader reference (bench/plain/yoga.ts) as a
 * process: the benchmark drives it exactly as it drives the gateway.
 *
 *   node dist/bench/yoga-reference.js --gitlab URL --connections 64
 *
 * Prints `{"url": "http://127.0.0.1:PORT/graphql"}` once listening; SIGTERM stops it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createRestClient } from './plain/rest.js';
import { yogaReference } from './plain/yoga.js';

const { values } = parseArgs({
  options: {
    gitlab: { type: 'string' },
    connections: { type: 'string', default: '64' },
  },
});
if (!values.gitlab) throw new Error('--gitlab is required');
const rest = createRestClient({ gitlabUrl: values.gitlab, hubzillaUrl: values.gitlab, connections: Number(values.connections) });
const yoga = yogaReference(rest);
const server = createServer(yoga);
server.keepAliveTimeout = 30_000;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
console.log(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql` }));

process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void rest.close().then(() => process.exit(0));
});
