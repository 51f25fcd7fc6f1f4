/**
 * How the benchmark's reference servers run as processes: on a free
 * loopback port, announced as `{"url": …}` on stdout, stopped by SIGTERM
 * (connections cut, upstream pools closed, exit 0).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RestClient } from './rest.js';

/** `rest`: the upstream client it closes on SIGTERM, where it has one. */
export async function serveReference(server: Server, rest?: RestClient): Promise<void> {
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  console.log(JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql` }));
  process.once('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void (rest?.close() ?? Promise.resolve()).then(() => process.exit(0));
  });
}
