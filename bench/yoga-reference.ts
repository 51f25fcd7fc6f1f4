/**
 * The hand-made Yoga + DataLoader reference (bench/plain/yoga.ts) as a
 * process: the benchmark drives it exactly as it drives the gateway.
 *
 *   node dist/bench/yoga-reference.js --gitlab URL --connections 64
 *
 * Prints `{"url": "http://127.0.0.1:PORT/graphql"}` once listening; SIGTERM stops it.
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { createRestClient } from './plain/rest.js';
import { serveReference } from './plain/serve.js';
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
await serveReference(server, rest);
