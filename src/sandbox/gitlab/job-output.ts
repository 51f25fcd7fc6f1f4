/**
 * What a sandbox job writes: its trace (log) while it runs and when it ends,
 * and the files of its artifacts archive when it succeeds. Deterministic per
 * job, so tests can pin contents.
 */
import type { JobArtifacts, SandboxJob } from './store.js';

/** Days until a job's artifacts expire (GitLab's default `expire_in` is 30 days). */
const ARTIFACT_TTL_MS = 30 * 86_400_000;

/** The trace's opening lines, written when a runner picks the job up. */
export function traceStart(job: SandboxJob): string {
  return [
    'Running with gitlab-runner 17.9.0 (sandbox)',
    '  on sandbox-shared-runner s_89e5e9956577, system ID: s_89e5e9956577',
    'Preparing the "docker" executor',
    `Using docker image ruby:3.3 for job ${job.name} ...`,
    'Getting source from Git repository',
    `Executing "step_script" stage of the job script`,
    `$ make ${job.name}`,
    '',
  ].join('\n');
}

/** The trace's closing lines. */
export function traceEnd(job: SandboxJob, outcome: 'success' | 'failed' | 'canceled'): string {
  if (outcome === 'success')
    return [`${job.name}: all checks passed`, 'Cleaning up project directory and file based variables', 'Job succeeded', ''].join('\n');
  if (outcome === 'canceled') return ['ERROR: Job was canceled', ''].join('\n');
  return [`${job.name}: 1 check failed`, 'Cleaning up project directory and file based variables', 'ERROR: Job failed: exit code 1', ''].join('\n');
}

/** The archive a successful job uploads (`artifacts:paths` of the sandbox's CI config). */
export function artifactsFor(job: SandboxJob, finishedAt: number): JobArtifacts {
  const entries = [
    { path: `${job.name}/summary.txt`, content: Buffer.from(`Job ${job.id} (${job.name}) in stage ${job.stage} succeeded.\n`) },
    { path: `${job.name}/report.json`, content: Buffer.from(`${JSON.stringify({ job: job.id, name: job.name, passed: true }, null, 2)}\n`) },
  ];
  return { entries, generatedBytes: null, generatedPath: '', expireAt: finishedAt + ARTIFACT_TTL_MS, junit: false };
}
