#!/usr/bin/env node
/**
 * `npm run dev`: the gateway from the sources under `tsx watch`, its JSON
 * logs pretty-printed. One process in front of tsx instead of a shell
 * pipeline (`tsx watch … | pino-pretty`), because npm hands SIGTERM to its
 * script's shell, which dies alone and leaves tsx, the gateway and
 * pino-pretty running: here SIGTERM and SIGINT reach tsx, which stops the
 * gateway, and this process exits with it.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import pretty from 'pino-pretty';

const require = createRequire(import.meta.url);
const tsx = require.resolve('tsx/cli');
const child = spawn(process.execPath, [tsx, 'watch', 'src/main.ts', 'serve', ...process.argv.slice(2)], {
  cwd: new URL('..', import.meta.url),
  stdio: ['inherit', 'pipe', 'inherit'],
});
child.stdout.pipe(pretty({ destination: 1, sync: true }));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
