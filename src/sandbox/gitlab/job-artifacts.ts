/**
 * Binary job routes, all streamed: the trace, the artifacts archive, one
 * file from it, and both again by ref name (the latest successful pipeline
 * for the ref). Artifact downloads (lib/api/ci/job_artifacts.rb) answer
 * anonymous callers on public projects with public jobs
 * (`authenticate_non_get!`) and accept a CI job token as `JOB-TOKEN` or
 * `job_token` (route_setting job_token_allowed), which acts as the job's
 * user; the trace route requires a signed-in user like the rest of
 * lib/api/ci/jobs.rb.
 */
import { createHash } from 'node:crypto';
import { traceAt } from './job-output.js';
import { Readable } from 'node:stream';
import type { HandlerResponse, JsonResponse, StreamResponse } from '../http-util.js';
import { badRequest, FORBIDDEN, notFound, RECORD_NOT_FOUND, UNAUTHORIZED, userProject, type ApiRequest, type RouteHandler } from './api-request.js';
import { canReadJobs, resolveJob } from './job-access.js';
import { ARCHIVE_FILENAME, archiveOf } from './job-records.js';
import { Params } from './params.js';
import type { SandboxJob } from './store.js';
import { generatedFileStream, generatedZipSize, generatedZipStream } from './zip-archive.js';

const CONTENT_TYPES: Record<string, string> = {
  '.txt': 'text/plain; charset=utf-8',
  '.log': 'text/plain; charset=utf-8',
  '.json': 'application/json',
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.xml': 'application/xml',
};

/** `attachment; filename="x"; filename*=UTF-8''x` as ActionDispatch::Http::ContentDisposition formats it. */
function attachment(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|"/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

function bufferResponse(content: Buffer, headers: Record<string, string>): StreamResponse {
  return { status: 200, headers: { ...headers, 'Content-Length': String(content.length) }, open: () => Readable.from([content]) };
}

/**
 * The caller of an artifact download: a JOB-TOKEN / job_token replaces an
 * anonymous caller with the job's user; an unknown job token is a 401.
 */
function withJobToken(request: ApiRequest): ApiRequest | JsonResponse {
  const token = request.headers['job-token'] ?? new Params(request.input).string('job_token');
  if (token === undefined || request.viewer) return request;
  const record = request.store.jobTokens.get(token);
  const job = record && request.store.jobs.get(record.jobId);
  const user = job && request.store.users.get(job.userId);
  if (user?.state !== 'active') return UNAUTHORIZED;
  return { ...request, viewer: user };
}

function archiveResponse(job: SandboxJob): HandlerResponse {
  const artifacts = job.artifacts;
  if (!artifacts) return notFound();
  const headers = { 'Content-Type': 'application/zip', 'Content-Disposition': attachment(ARCHIVE_FILENAME) };
  const modifiedAt = job.finishedAt ?? job.createdAt;
  if (artifacts.generatedBytes !== null) {
    const { generatedPath, generatedBytes } = artifacts;
    return {
      status: 200,
      headers: { ...headers, 'Content-Length': String(generatedZipSize(generatedPath, generatedBytes)) },
      open: () => generatedZipStream(generatedPath, generatedBytes, modifiedAt),
    };
  }
  return bufferResponse(archiveOf(artifacts, modifiedAt).zip, headers);
}

/** Gitlab::Ci::Build::Artifacts::Path#valid? (no NUL byte, valid UTF-8), and no way out of the archive. */
function validArtifactPath(path: string): boolean {
  if (path === '' || path.includes('\0') || path.includes('\uFFFD')) return false;
  return !path.split('/').some((segment) => segment === '..');
}

function entryResponse(job: SandboxJob, path: string): HandlerResponse {
  const artifacts = job.artifacts;
  if (!artifacts) return notFound();
  if (!validArtifactPath(path)) return badRequest();
  const name = path.split('/').pop() ?? path;
  const extension = /\.[^.]+$/.exec(name)?.[0]?.toLowerCase() ?? '';
  const headers = { 'Content-Type': CONTENT_TYPES[extension] ?? 'application/octet-stream', 'Content-Disposition': attachment(name) };
  if (artifacts.generatedBytes !== null && path === artifacts.generatedPath) {
    const size = artifacts.generatedBytes;
    return { status: 200, headers: { ...headers, 'Content-Length': String(size) }, open: () => generatedFileStream(size) };
  }
  const entry = artifacts.entries.find((e) => e.path === path);
  if (!entry) return notFound();
  return bufferResponse(entry.content, headers);
}

/** GET /projects/:id/jobs/:job_id/trace: text/plain; a job without a trace answers an empty body (`trace.raw || ''`). */
export const getTrace: RouteHandler = (request) => {
  const found = resolveJob(request, 'read');
  if ('status' in found) return found;
  const trace = Buffer.from(traceAt(found.job, request.runtime.clock.now()));
  const headers = { 'Content-Type': 'text/plain', 'Content-Disposition': `infile; filename="${found.job.id}.log"` };
  // GitLab's API sends the whole log whatever the Range (lib/api/ci/jobs.rb: `body trace`); traceRanges models a server that honours it.
  const range = request.runtime.traceRanges ? /^bytes=(\d+)-$/.exec(request.headers.range ?? '') : null;
  if (!range) {
    // `body trace` is a string, so Rails' Rack::ETag and Rack::ConditionalGet apply as to any API answer (http-util.ts conditionalGet).
    const etag = `W/"${createHash('sha256').update(trace).digest('hex').slice(0, 32)}"`;
    const cached = { ...headers, ETag: etag, 'Cache-Control': 'max-age=0, private, must-revalidate' };
    if ((request.headers['if-none-match'] ?? '').split(/\s*,\s*/).includes(etag)) {
      return { status: 304, headers: { ...cached, 'Content-Length': '0' }, open: () => Readable.from([]) };
    }
    return bufferResponse(trace, cached);
  }
  const from = Number(range[1]);
  if (from >= trace.length)
    return { status: 416, headers: { ...headers, 'Content-Range': `bytes */${trace.length}`, 'Content-Length': '0' }, open: () => Readable.from([]) };
  const part = trace.subarray(from);
  return {
    status: 206,
    headers: { ...headers, 'Content-Range': `bytes ${from}-${trace.length - 1}/${trace.length}`, 'Content-Length': String(part.length) },
    open: () => Readable.from([part]),
  };
};

/** GET /projects/:id/jobs/:job_id/artifacts: the zip, or 404 when the job has none. */
export const downloadArtifacts: RouteHandler = (request) => {
  const caller = withJobToken(request);
  if ('status' in caller) return caller;
  const found = resolveJob(caller, 'read', { anonymous: true });
  if ('status' in found) return found;
  return archiveResponse(found.job);
};

/** GET /projects/:id/jobs/:job_id/artifacts/*artifact_path: one file of the archive; 400 for an invalid path. */
export const downloadArtifactFile: RouteHandler = (request) => {
  const caller = withJobToken(request);
  if ('status' in caller) return caller;
  const found = resolveJob(caller, 'read', { anonymous: true });
  if ('status' in found) return found;
  return entryResponse(found.job, caller.params.artifact_path ?? '');
};

/**
 * Project#latest_successful_build_for_ref: the newest successful pipeline
 * for the ref, then its (non-retried) job of that name with an archive.
 */
function latestSuccessfulJob(request: ApiRequest): { job: SandboxJob } | JsonResponse {
  const params = new Params(request.input);
  params.require('job');
  const failure = params.failure();
  if (failure) return failure;
  const project = userProject(request);
  if ('status' in project) return project;
  if (!canReadJobs(request, project)) return request.viewer ? FORBIDDEN : UNAUTHORIZED;
  const ref = request.params.ref_name ?? '';
  const name = params.string('job');
  const pipeline = [...request.store.pipelines.values()]
    .filter((p) => p.projectId === project.id && p.ref === ref && p.status === 'success')
    .sort((a, b) => b.id - a.id)[0];
  const job = pipeline && request.store.pipelineJobs(pipeline.id).find((j) => !j.retried && j.name === name && j.artifacts !== null);
  return job ? { job } : RECORD_NOT_FOUND;
}

/** GET /projects/:id/jobs/artifacts/:ref_name/download?job=NAME */
export const downloadArtifactsByRef: RouteHandler = (request) => {
  const caller = withJobToken(request);
  if ('status' in caller) return caller;
  const found = latestSuccessfulJob(caller);
  if ('status' in found) return found;
  return archiveResponse(found.job);
};

/** GET /projects/:id/jobs/artifacts/:ref_name/raw/*artifact_path?job=NAME */
export const downloadArtifactFileByRef: RouteHandler = (request) => {
  const caller = withJobToken(request);
  if ('status' in caller) return caller;
  const found = latestSuccessfulJob(caller);
  if ('status' in found) return found;
  return entryResponse(found.job, caller.params.artifact_path ?? '');
};
