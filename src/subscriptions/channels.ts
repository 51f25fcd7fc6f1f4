/**
 * What the hub's topics share: the bus channel names (webhooks per project
 * on the shared channel, polls per project and credential scope on the
 * local one), the message that ends a scope's topics when its credentials
 * lose access, and the error for what a scope may not see.
 */
import { UpstreamError } from '../errors.js';

/** The shared channel of a project's job and pipeline webhooks. */
export function jobsTopic(projectId: number): string {
  return `gitlab:jobs:${projectId}`;
}

/** The local channel of one credential scope's polls of a project. */
export function pollTopic(kind: 'jobs' | 'project' | 'pipelines', projectId: number, scope: string): string {
  return `poll:${kind}:${projectId}:${scope}`;
}

export function notVisible(what: string, path: string): UpstreamError {
  return new UpstreamError(`${what} was not found or is not visible with these credentials.`, 'NOT_FOUND', {
    name: 'gitlab',
    status: 404,
    method: 'GET',
    path,
  });
}

/**
 * What a poller publishes when its credentials lost access (a revoked token,
 * a removed member): its topics end with it. Plain data, since poll results
 * may cross processes (workers, instances) as JSON.
 */
export interface Revoked {
  revoked: { message: string; code: UpstreamError['code']; upstream: UpstreamError['upstream'] };
}

export function revoked(error: UpstreamError): Revoked {
  return { revoked: { message: error.message, code: error.code, upstream: error.upstream } };
}

export function isRevoked(message: unknown): message is Revoked {
  return typeof (message as Partial<Revoked> | null)?.revoked?.message === 'string';
}

/** The error a Revoked message ends its topics with. */
export function revokedError(message: Revoked): UpstreamError {
  return new UpstreamError(message.revoked.message, message.revoked.code, message.revoked.upstream);
}

/** True for failures that mean "these credentials may not see it", as opposed to an upstream in trouble. */
export function isAccessFailure(error: unknown): boolean {
  return error instanceof UpstreamError && (error.code === 'NOT_FOUND' || error.code === 'FORBIDDEN' || error.code === 'UNAUTHENTICATED');
}
