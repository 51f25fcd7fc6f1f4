import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

/** The tests of the Hubzilla API, run again against the sandbox playing Hubzilla 10 (SANDBOX_HUBZILLA_VERSION). */
const HUBZILLA_TESTS = ['test/integration/hubzilla-*.test.ts', 'test/integration/sandbox-hubzilla*.test.ts'];

export default defineConfig({
  resolve: {
    // Node loads graphql's CommonJS build for the dependencies (no "exports" map);
    // Vite would pick its .mjs build for our code: two copies break instanceof.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    // Sends every gateway's logs to one file and checks it for credentials after the run.
    globalSetup: ['test/global-setup.ts'],
    // vi.waitFor waits for its condition, not for one second (test/setup.ts).
    setupFiles: ['test/setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Vitest's default is one worker per core but one: a single worker on CI's two cores, where most test time is
    // waiting on child processes and sockets. Two workers there took the unit and integration files from 237 s to 155 s.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      { extends: true, test: { name: 'hubzilla 8.8', include: ['test/**/*.test.ts'] } },
      // hubzilla-releases.test.ts starts both releases itself.
      {
        extends: true,
        test: {
          name: 'hubzilla 10',
          include: HUBZILLA_TESTS,
          exclude: ['test/integration/hubzilla-releases.test.ts'],
          env: { SANDBOX_HUBZILLA_VERSION: '10' },
        },
      },
    ],
  },
});
