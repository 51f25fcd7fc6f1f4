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

/** Sandbox time between two lines a running job writes. */
export const TRACE_LINE_MS = 300;

/**
 * What a running job has written since it started, up to `until`: a
 * collapsible section (GitLab's `section_start`/`section_end` markers) with
 * one coloured line every TRACE_LINE_MS, as a runner streams its script's
 * output. The section closes when the job ends (`closed`).
 */
export function traceProgress(job: SandboxJob, until: number, closed: boolean): string {
  if (job.startedAt === null) return '';
  const started = Math.floor(job.startedAt / 1000);
  const count = Math.max(0, Math.floor((until - job.startedAt) / TRACE_LINE_MS));
  const lines = [`section_start:${started}:run_${job.name}[collapsed=false]\r\u001b[0K\u001b[36;1mRunning ${job.name}\u001b[0;m`];
  for (let i = 1; i <= count; i++) lines.push(`\u001b[32;1m✓\u001b[0;m ${job.name}: step ${i} of the script (ünïcode ok)`);
  if (closed) lines.push(`section_end:${Math.floor(until / 1000)}:run_${job.name}\r\u001b[0K`);
  return `${lines.join('\n')}\n`;
}

/** The trace of a job as GitLab serves it at `now`: what it wrote so far, growing while it runs. */
export function traceAt(job: SandboxJob, now: number): string {
  if (job.trace === null) return '';
  // A finished job's trace holds everything; a running one's grows with the clock.
  return job.finishedAt === null && job.startedAt !== null ? job.trace + traceProgress(job, now, false) : job.trace;
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
