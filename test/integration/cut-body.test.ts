/**
 * An answer cut short after its head (the connection closes before the
 * bytes its Content-Length promised): a GET is asked once more, not three
 * times, and the error says the answer was cut, not that GitLab could not
 * be reached.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let upstream: Server;
let t: TestApp;
let requests = 0;
/** How many of the next answers are cut; the rest come whole. */
let cuts = 0;

const PROJECT = JSON.stringify({ id: 7, name: 'Playground', path_with_namespace: 'demo/playground' });

beforeAll(async () => {
  upstream = createServer((socket: Socket) => {
    socket.once('data', () => {
      requests++;
      if (cuts === 0) {
        socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${PROJECT.length}\r\nconnection: close\r\n\r\n${PROJECT}`);
        return;
      }
      cuts--;
      // The head and the start of the body, then, once the head has surely been read, the connection breaks off.
      socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4096\r\n\r\n{"id": 7, "na`);
      setTimeout(() => socket.destroy(), 50);
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const { port } = upstream.address() as AddressInfo;
  t = await createTestApp({ gitlabUrl: new URL(`http://127.0.0.1:${port}`), env: { UPSTREAM_RETRIES: '3' } });
});

afterAll(async () => {
  await t.close();
  await new Promise((resolve) => upstream.close(resolve));
});

describe('an answer cut short after its head', () => {
  it('is asked for once more, and then reported as cut', async () => {
    requests = 0;
    cuts = Number.POSITIVE_INFINITY;
    const res = await t.gql('{ project(id: "7") { name } }');
    expect(requests).toBe(2);
    expect(res.data).toEqual({ project: null });
    expect(res.errors?.[0]).toMatchObject({
      message: "GitLab's answer was cut short: the connection closed before its body was whole.",
      extensions: { code: 'UPSTREAM_ERROR', upstream: { name: 'gitlab', status: 200, method: 'GET' } },
    });
  });

  it('is whole on its second try, and the caller never knows', async () => {
    requests = 0;
    cuts = 1;
    const res = await t.gql('{ project(id: "7") { name } }');
    expect(res).toMatchObject({ data: { project: { name: 'Playground' } } });
    expect(res.errors).toBeUndefined();
    expect(requests).toBe(2);
  });
});
