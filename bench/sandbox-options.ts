/**
 * The seed the benchmark and its call-count tests run against: the demo data
 * plus bulk data sized for the workloads under bench/workloads (see the
 * comments at the top of src/sandbox/gitlab/seed.ts and hubzilla/seed.ts).
 */
import type { GitlabSandboxOptions } from '../src/sandbox/gitlab/server.js';
import type { HubzillaSandboxOptions } from '../src/sandbox/hubzilla/server.js';
import { MAX_CLIENTS } from './workloads.js';

/** 1,000 bulk projects with 20 jobs each, 100 forks of 5 of them, and 100 more jobs on platform/core; nothing moves. Three tokens a client (demo's, alice's, bob's: workloads.ts). */
export const BENCH_GITLAB_OPTIONS: GitlabSandboxOptions = Object.freeze({
  clock: 'manual',
  extraTokens: 3 * MAX_CLIENTS,
  bulkPublicProjects: 1_000,
  bulkJobs: { perProject: 20, perPipeline: 5, seeded: { 1: 100 } },
  bulkForks: { count: 100, parents: 5 },
});

/** 100 more files in the demo channel, so a file listing fills a page of 100. */
export const BENCH_HUBZILLA_OPTIONS: HubzillaSandboxOptions = Object.freeze({ bulkFiles: 100 });
