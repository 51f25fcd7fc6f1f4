#!/usr/bin/env node
/**
 * Compiles dist/ when the sources are newer than the last build, else does
 * nothing: `npm start` runs it first (an install runs no build script, which
 * npm warns about for a global install of the package), and so does the test
 * run, so a change is never run stale and an unchanged tree starts at once.
 * Plain JavaScript: it runs before anything is compiled.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';

const ROOT = new URL('..', import.meta.url);
/** Written after a build: dist/ is as new as the sources it was built from. */
const STAMP = new URL('dist/.built', ROOT);
const CONFIG = ['package.json', 'tsconfig.json', 'tsconfig.build.json'];

/** The newest modification time under `dir` (recursively), in ms. */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = new URL(entry.name + (entry.isDirectory() ? '/' : ''), dir);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

// `npm run build` ends with --stamp: what it built is current, and a start after `npm prune --omit=dev` needs no compiler.
if (process.argv.includes('--stamp')) {
  writeFileSync(STAMP, '');
  process.exit(0);
}

// An installed package has dist/ and no sources: nothing to build.
if (existsSync(new URL('src/', ROOT))) {
  const sources = Math.max(newest(new URL('src/', ROOT)), ...CONFIG.map((file) => statSync(new URL(file, ROOT)).mtimeMs));
  const built = existsSync(STAMP) ? statSync(STAMP).mtimeMs : 0;
  if (sources >= built) {
    if (!existsSync(new URL('node_modules/typescript/', ROOT))) {
      console.error(
        'dist/ is older than src/ (or was never built), and TypeScript is not installed to build it: run `npm run build` before `npm prune --omit=dev`, or `npm ci` to build here.',
      );
      process.exit(1);
    }
    const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) process.exit(build.status ?? 1);
  }
}
