/**
 * Delivers project webhooks the way WebHookService does: one POST per hook
 * with the event toggled on, JSON body, and the real delivery headers
 * (reference/gitlab/webhooks/HEADERS.md): Content-Type, User-Agent
 * GitLab/<version>, Idempotency-Key, X-Gitlab-Event "<Event> Hook",
 * X-Gitlab-Webhook-UUID (new per delivery), X-Gitlab-Instance,
 * X-Gitlab-Event-UUID (shared by every hook of one event) and X-Gitlab-Token
 * only when the hook has a secret.
 *
 * Fire and forget: a failing receiver (refused, timeout, 5xx) is recorded in
 * `deliveries` and never reaches the sandbox; like GitLab, nothing is retried.
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Webhook } from 'standardwebhooks';
import type { CiEvent } from './ci-runner.js';
import { jobEventPayload, pipelineEventPayload } from './hook-payloads.js';
import { WEB_BASE } from './project-records.js';
import type { GitlabStore, HookEvent } from './store.js';

/** The GitLab version the sandbox claims in User-Agent. */
export const GITLAB_VERSION = '17.9.0';
const DELIVERY_TIMEOUT_MS = 5_000;

/** One webhook request the sandbox sent. */
export interface HookDelivery {
  hookId: number;
  projectId: number;
  url: string;
  /** The X-Gitlab-Event value, e.g. "Job Hook". */
  event: string;
  /** Header names as sent. */
  headers: Record<string, string>;
  /** The JSON body as sent. */
  body: string;
  /** The receiver's status code, once answered. */
  status?: number;
  /** Why the delivery failed without a response (refused, timeout, bad URL). */
  error?: string;
}

export class HookDeliverer {
  readonly deliveries: HookDelivery[] = [];
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly store: GitlabStore,
    /** The clock of signature timestamps. */
    private readonly now: () => number = Date.now,
  ) {}

  /** Sends a CI event to every hook of its project that subscribes to it. */
  deliver(event: CiEvent): void {
    const projectId = event.kind === 'job' ? event.job.projectId : event.pipeline.projectId;
    const toggle: HookEvent = event.kind === 'job' ? 'job_events' : 'pipeline_events';
    const hooks = [...this.store.hooks.values()].filter((hook) => hook.projectId === projectId && hook.events[toggle]);
    if (hooks.length === 0) return;
    const payload = event.kind === 'job' ? jobEventPayload(this.store, event.job) : pipelineEventPayload(this.store, event.pipeline);
    if (!payload) return;
    const body = JSON.stringify(payload);
    const eventName = event.kind === 'job' ? 'Job Hook' : 'Pipeline Hook';
    const eventUuid = randomUUID();
    for (const hook of hooks) {
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        'User-Agent': `GitLab/${GITLAB_VERSION}`,
        'Idempotency-Key': randomUUID(),
        'X-Gitlab-Event': eventName,
        'X-Gitlab-Webhook-UUID': randomUUID(),
        'X-Gitlab-Instance': WEB_BASE,
        'X-Gitlab-Event-UUID': eventUuid,
      };
      // WebHookService strips line breaks from the token before sending it.
      if (hook.token) headers['X-Gitlab-Token'] = hook.token.replace(/[\r\n]/g, '');
      if (hook.signingToken) Object.assign(headers, standardSignature(hook.signingToken, body, this.now()));
      for (const [name, value] of hook.customHeaders) headers[name] = value;
      // WebHookService#interpolated_url: `{name}` parts of the URL take the hook's URL variables.
      const url = hook.url.replace(/\{([A-Za-z0-9_]+)\}/g, (part, name: string) => hook.urlVariables.get(name) ?? part);
      const delivery: HookDelivery = { hookId: hook.id, projectId, url, event: eventName, headers, body };
      this.deliveries.push(delivery);
      const sent = send(delivery, hook.enableSslVerification).finally(() => this.inFlight.delete(sent));
      this.inFlight.add(sent);
    }
  }

  /** Resolves once every delivery started so far has been answered or has failed. */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}

/**
 * Standard Webhooks headers, as GitLab 19.0+ signs deliveries
 * (WebHooks::SignatureService, MR 230944): `webhook-id` (the same on
 * retries), `webhook-timestamp` (seconds), and `webhook-signature` `v1,`
 * and the base64 HMAC-SHA256 of `id.timestamp.body` keyed by the base64 part
 * of the `whsec_` token.
 */
export function standardSignature(signingToken: string, body: string, nowMs: number): Record<string, string> {
  const id = `msg_${randomUUID()}`;
  const signature = new Webhook(signingToken).sign(id, new Date(nowMs), body);
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(nowMs / 1000)), 'webhook-signature': signature };
}

function send(delivery: HookDelivery, verifyTls: boolean): Promise<void> {
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL(delivery.url);
    } catch {
      delivery.error = 'invalid URL';
      resolve();
      return;
    }
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const headers = { ...delivery.headers, 'Content-Length': String(Buffer.byteLength(delivery.body)) };
    try {
      const req = request(url, { method: 'POST', headers, agent: false, timeout: DELIVERY_TIMEOUT_MS, rejectUnauthorized: verifyTls }, (res) => {
        delivery.status = res.statusCode;
        // Read and drop the answer: GitLab keeps only a prefix for the UI.
        res.resume();
        res.on('end', resolve);
        res.on('error', () => resolve());
      });
      req.on('timeout', () => req.destroy(new Error(`timed out after ${DELIVERY_TIMEOUT_MS} ms`)));
      req.on('error', (error) => {
        delivery.error ??= error.message;
        resolve();
      });
      req.end(delivery.body);
    } catch (error) {
      delivery.error = error instanceof Error ? error.message : String(error);
      resolve();
    }
  });
}
