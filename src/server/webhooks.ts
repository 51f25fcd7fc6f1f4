/**
 * POST /webhooks/gitlab: GitLab job and pipeline webhooks, in the payload
 * format GitLab sends (reference/gitlab/webhooks/), published to subscribers.
 *
 * In order: the path and method; a delivery GitLab signed (Standard
 * Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`, where
 * GITLAB_WEBHOOK_SIGNING_TOKEN is set) is judged by its signature and a
 * timestamp within 5 minutes, once its body is read; any other by
 * X-Gitlab-Token against the configured secret in constant time (SHA-256 of
 * both, then timingSafeEqual, so neither the length nor a prefix leaks), 401
 * otherwise, before any body is read;
 * the body capped at WEBHOOK_MAX_BYTES (413) and parsed (400 when it is not
 * JSON or not a well-formed job or pipeline event); redeliveries dropped by
 * `webhook-id` and Idempotency-Key (the same on GitLab's retries and "Resend"), by the
 * X-Gitlab-Event-UUID with the reported state, and by the body itself
 * (GitLab before 17.4 sends no Idempotency-Key, before 16.2 no UUID).
 * Other event kinds are answered 200 and ignored, as GitLab's receiver
 * guide asks: a 4xx would count towards disabling the hook.
 * Never logs or echoes the token.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { SubscriptionHub } from '../subscriptions/hub.js';
import { readWebhookEvent } from '../subscriptions/webhook-events.js';
import type { AnswerCache } from '../upstreams/answer-cache.js';
import { refuseOversized } from './oversize.js';

export const GITLAB_WEBHOOK_PATH = '/webhooks/gitlab';

export interface WebhookReceiverOptions {
  secret: string;
  /** GITLAB_WEBHOOK_SIGNING_TOKEN (`whsec_…`): signed deliveries are verified with it. */
  signingToken?: string | null;
  maxBytes: number;
  hub: SubscriptionHub;
  /** The answer cache: each event drops its project's job and pipeline answers, in every instance, before it is published. */
  cache?: AnswerCache | null;
  /** Reports failures to publish (never a token). */
  log?: (message: string) => void;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Constant-time comparison of a presented token with the secret. */
export function tokenMatches(presented: string | undefined, secret: string): boolean {
  // Equal-length digests: timingSafeEqual needs equal lengths, and the digest hides the secret's length.
  const matches = timingSafeEqual(digest(presented ?? ''), digest(secret));
  return presented !== undefined && matches;
}

function reply(res: ServerResponse, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

function header(req: Pick<IncomingMessage, 'headers'>, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Reads the body up to `maxBytes`; null when it is larger (the rest is not read). */
function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > maxBytes) {
        done = true;
        req.pause();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) resolve(Buffer.concat(chunks));
    });
    req.on('error', (error) => {
      if (!done) reject(error);
      done = true;
    });
  });
}

/**
 * Why a signed delivery is refused, or null when it verifies: one of its
 * signatures is the HMAC-SHA256 of `id.timestamp.body` under the token's key
 * and its timestamp is within 5 minutes of now (standardwebhooks, the
 * Standard Webhooks reference library).
 */
export function signatureRefusal(req: Pick<IncomingMessage, 'headers'>, body: Buffer, signingToken: string): string | null {
  const headers = {
    'webhook-id': header(req, 'webhook-id') ?? '',
    'webhook-timestamp': header(req, 'webhook-timestamp') ?? '',
    'webhook-signature': header(req, 'webhook-signature') ?? '',
  };
  try {
    new Webhook(signingToken).verify(body, headers, { jsonParse: false });
    return null;
  } catch (error) {
    const reason = error instanceof WebhookVerificationError ? error.message : 'it could not be verified';
    return `The webhook signature was refused: ${reason.slice(0, 100)}.`;
  }
}

/** The longest the receiver waits to record and publish an event (Redis paused, say) before answering 503: well inside GitLab's 10 s. */
const PUBLISH_DEADLINE_MS = 5_000;

/** Handles the request when it is for the receiver; false otherwise. */
export function handleGitlabWebhook(req: IncomingMessage, res: ServerResponse, options: WebhookReceiverOptions): boolean {
  const path = (req.url ?? '').split('?')[0];
  if (path !== GITLAB_WEBHOOK_PATH) return false;
  void receive(req, res, options).catch(() => {
    if (!res.headersSent) reply(res, 500, { error: 'Unexpected error.' });
    else res.destroy();
  });
  return true;
}

async function receive(req: IncomingMessage, res: ServerResponse, options: WebhookReceiverOptions): Promise<void> {
  if (req.method !== 'POST') {
    req.resume();
    reply(res, 405, { error: 'Use POST.' }, { allow: 'POST' });
    return;
  }
  const signed = options.signingToken ? header(req, 'webhook-signature') !== undefined : false;
  if (!signed && !tokenMatches(header(req, 'x-gitlab-token'), options.secret)) {
    req.resume();
    reply(res, 401, { error: 'X-Gitlab-Token is missing or wrong.' });
    return;
  }
  const declared = Number(header(req, 'content-length') ?? 0);
  if (declared > options.maxBytes) {
    refuseOversized(req, res, options.maxBytes, { error: `The body is larger than ${options.maxBytes} bytes.` });
    return;
  }
  const body = await readBody(req, options.maxBytes);
  if (body === null) {
    refuseOversized(req, res, options.maxBytes, { error: `The body is larger than ${options.maxBytes} bytes.` });
    return;
  }
  if (signed) {
    const refusal = signatureRefusal(req, body, options.signingToken as string);
    if (refusal) {
      reply(res, 401, { error: refusal });
      return;
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    reply(res, 400, { error: 'The body is not JSON.' });
    return;
  }
  const read = readWebhookEvent(parsed);
  if (!read.ok) {
    if (read.reason === 'unsupported') reply(res, 200, { status: 'ignored', reason: read.message });
    else reply(res, 400, { error: read.message });
    return;
  }
  const keys: [string, ...string[]] = [`body:${createHash('sha256').update(body).digest('hex')}`];
  // GitLab repeats a signed delivery's webhook-id on its retries and on "Resend".
  const webhookId = signed ? header(req, 'webhook-id') : undefined;
  if (webhookId) keys.push(`webhook-id:${webhookId}`);
  const idempotencyKey = header(req, 'idempotency-key');
  if (idempotencyKey && idempotencyKey.length <= 200) keys.push(`idempotency:${idempotencyKey}`);
  // The event UUID alone is shared by "recursive" hooks (a receiver that retries a job), so it is keyed with the state.
  const eventUuid = header(req, 'x-gitlab-event-uuid');
  if (eventUuid && eventUuid.length <= 200) {
    const state = read.event.jobs.map((job) => `${job.id}=${job.status}`).join(',');
    keys.push(
      `event:${eventUuid}:${createHash('sha256')
        .update(`${read.event.kind}:${read.event.pipelineId ?? ''}:${state}`)
        .digest('hex')}`,
    );
  }
  // Redeliveries drop again: harmless, and a drop never waits on the dedup store.
  options.cache?.webhookDelivered(read.event.projectId, read.event.kind);
  let outcome: Awaited<ReturnType<typeof options.hub.publishWebhook>>;
  let timer: NodeJS.Timeout | undefined;
  try {
    // GitLab waits 10 s for a hook and counts failures toward turning it off: a 503 in time lets it deliver again.
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer from the event bus within ${PUBLISH_DEADLINE_MS} ms`)), PUBLISH_DEADLINE_MS);
    });
    outcome = await Promise.race([options.hub.publishWebhook(read.event, keys), late]);
  } catch (error) {
    options.log?.(`webhook: could not publish: ${error instanceof Error ? error.message : 'failed'}`);
    reply(res, 503, { error: 'The event could not be published; try again.' });
    return;
  } finally {
    clearTimeout(timer);
  }
  reply(res, 200, { status: outcome });
}
