/** A local port that refuses connections, for tests of an upstream or a webhook receiver that is down. */
import { connect } from 'node:net';

/**
 * A port on which nothing listens. Not a port just freed by `listen(0)`: every
 * test server binds an ephemeral port, so another may take that port again
 * before it is dialled (a CI run got a sandbox's 404 from one). Ports below
 * the ephemeral range are never handed out that way; the first that refuses
 * is used.
 */
export async function deadPort(): Promise<number> {
  for (let port = 1; port < 1024; port++) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
    });
    if (refused) return port;
  }
  throw new Error('no port below 1024 refuses connections on 127.0.0.1');
}
