/** Child processes for end-to-end tests: a free port, and a wait for what a process prints once it is up. */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** A TCP port nothing listens on now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves with the first match of `pattern` in the process's output; rejects when it exits first, or after a backstop of 2 minutes (three suites at once on 2 cores start a gateway in well over 20 s). */
export function waitForOutput(child: ChildProcess, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start:\n${output}`)), 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = pattern.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}:\n${output}`));
    });
  });
}

/** A throwaway redis-server on a free loopback port (or `port`, to start one again where another was), nothing saved to disk; stop it with SIGTERM. */
export async function startRedis(port?: number): Promise<{ child: ChildProcess; url: string; port: number }> {
  // A port found free can be taken by another process (another suite) before redis-server binds it: then another one is tried.
  for (let attempt = 1; ; attempt++) {
    const at = port ?? (await freePort());
    const child = spawn('redis-server', ['--port', String(at), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
    try {
      await waitForOutput(child, /Ready to accept connections/, 'redis-server');
      return { child, url: `redis://127.0.0.1:${at}`, port: at };
    } catch (error) {
      if (port !== undefined || attempt >= 5 || !/Address already in use/.test(String(error))) throw error;
    }
  }
}
