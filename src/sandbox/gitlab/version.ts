/**
 * GET /version (lib/api/version.rb): the instance's version and revision,
 * for authenticated callers only (`before { authenticate! }`): 401 otherwise.
 */
import { type RouteHandler, UNAUTHORIZED } from './api-request.js';

/** The GitLab release the sandbox's shapes follow. */
export const SANDBOX_GITLAB_VERSION = { version: '17.11.0', revision: '5ad0e3a1b2c' };

export const getVersion: RouteHandler = (request) => (request.viewer ? { status: 200, body: { ...SANDBOX_GITLAB_VERSION } } : UNAUTHORIZED);
