/** Child processes for end-to-end tests: a free port, and a wait for what a process prints once it is up. */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The first port the kernel hands out to `listen(0)` (Linux's ip_local_port_range; 32768 where it cannot be read). */
function ephemeralLow(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

/**
 * A TCP port nothing listens on now, below the ephemeral range: every test
 * server binds port 0, so a port in that range may be handed to one of them
 * as soon as it is free, for instance while a Redis killed by a test is
 * started again on its port.
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow() - 1;
  const low = Math.max(1024, high - 12_000);
  for (;;) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
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
