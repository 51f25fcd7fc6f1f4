/**
 * Login and channel selection as `api_call()` / `api_login()` / `api_user()`
 * do them (reference §1.2): an existing PHP session first, then an OAuth2
 * bearer token, then HTTP Basic with a channel nickname (no `@`) or an account
 * email (`@`, lands on the account's default channel); `?channel=` switches to
 * another channel of the same account.
 */
import { randomBytes } from 'node:crypto';
import type { AccountRecord, ChannelRow } from './records.js';
import type { Store } from './store.js';

/** A PHP session: once a login succeeds it authenticates later requests on its own. */
export interface Session {
  id: string;
  uid: number | null;
}

export class SessionTable {
  private readonly sessions = new Map<string, Session>();

  get(id: string | undefined): Session | undefined {
    return id === undefined ? undefined : this.sessions.get(id);
  }

  create(): Session {
    // PHP's default session ids: 26 characters of [0-9a-v].
    const alphabet = '0123456789abcdefghijklmnopqrstuv';
    const id = [...randomBytes(26)].map((b) => alphabet[b & 31]).join('');
    const session: Session = { id, uid: null };
    this.sessions.set(id, session);
    return session;
  }
}

/** The `Set-Cookie` value of a session, as the real hub formats it. */
export function sessionCookie(session: Session): string {
  return `PHPSESSID=${session.id}; path=/; HttpOnly; SameSite=None`;
}

/** Reads PHPSESSID from a Cookie header. */
export function sessionIdFrom(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === 'PHPSESSID') return rest.join('=');
  }
  return undefined;
}

/**
 * `api_login()`'s Basic step. `[$name,$password] = explode(':', …)` keeps only
 * the text up to a second colon, so a password containing `:` can never match
 * (err_basic_password_with_colon.txt), while `user:pass:junk` logs in as
 * `user:pass`.
 */
export function basicLogin(store: Store, authorization: string): ChannelRow | undefined {
  const m = /^Basic\s+(.+)$/i.exec(authorization.trim());
  if (!m?.[1]) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const [login = '', password = ''] = decoded.split(':');
  if (login === '') return undefined;
  let account: AccountRecord | undefined;
  let channel: ChannelRow | undefined;
  if (login.includes('@')) {
    account = store.accountByEmail(login);
    channel = account ? store.channelById(account.default_channel) : undefined;
  } else {
    channel = store.channelByNick(login);
    account = channel ? store.accountById(channel.channel_account_id) : undefined;
  }
  if (!account || !channel || account.password !== password) return undefined;
  return channel;
}

/** An OAuth2 bearer token issued by POST /token; its user is a channel id. */
export function bearerLogin(store: Store, authorization: string): ChannelRow | undefined {
  const m = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
  if (!m?.[1]) return undefined;
  const token = store.oauthTokens.get(m[1]);
  if (!token || token.expires < Date.now()) return undefined;
  return store.channelById(token.uid);
}

/**
 * `api_user()`'s `channel=` switch: allowed only to a channel of the same
 * account; anything else makes the handler return false (an empty 200, not a
 * 401: err_group_channel_param_other.txt).
 */
export function switchChannel(store: Store, current: ChannelRow, nick: string | undefined): ChannelRow | undefined {
  if (nick === undefined || nick === '' || nick === current.channel_address) return current;
  const target = store.channelByNick(nick);
  if (!target || current.channel_account_id === 0 || target.channel_account_id !== current.channel_account_id) return undefined;
  return target;
}

/**
 * POST /token with the `client_credentials` grant (bshaffer oauth2-server):
 * client id and secret by HTTP Basic or form fields; the token's user is the
 * client's `user_id` channel, valid 3600 s (oauth2_token_client_credentials.txt).
 */
export function issueToken(
  store: Store,
  authorization: string | undefined,
  form: { grant_type?: string; client_id?: string; client_secret?: string },
): { status: number; body: Record<string, unknown> } {
  let clientId = form.client_id;
  let clientSecret = form.client_secret;
  const m = /^Basic\s+(.+)$/i.exec(authorization ?? '');
  if (m?.[1]) {
    const decoded = Buffer.from(m[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    clientId = colon < 0 ? decoded : decoded.slice(0, colon);
    clientSecret = colon < 0 ? '' : decoded.slice(colon + 1);
  }
  if (!form.grant_type) {
    return { status: 400, body: { error: 'invalid_request', error_description: 'The grant type was not specified in the request' } };
  }
  if (form.grant_type !== 'client_credentials') {
    return { status: 400, body: { error: 'unsupported_grant_type', error_description: `Grant type "${form.grant_type}" not supported` } };
  }
  const client = store.oauthClients.find((c) => c.client_id === clientId && c.client_secret === clientSecret);
  if (!client) return { status: 400, body: { error: 'invalid_client', error_description: 'The client credentials are invalid' } };
  const token = randomBytes(20).toString('hex');
  store.oauthTokens.set(token, { uid: client.user_id, expires: Date.now() + 3600_000 });
  return { status: 200, body: { access_token: token, expires_in: 3600, token_type: 'Bearer', scope: null } };
}
