/**
 * Secrets inside free text, wherever they come from: the logs scrub every
 * string with this, and upstream messages meant for a caller (GitLab's 4xx
 * texts) pass through it before they are shown. Nothing here knows GraphQL
 * or HTTP: both the server and the upstream clients use it.
 */

export const REDACTED = '[Redacted]';

type Replacer = (match: string, ...groups: string[]) => string;

/** A digit or symbol, mixed case over 8 characters, or 20 characters or more: what tokens and base64 have and words do not. */
function looksLikeCredential(payload: string): boolean {
  return /[^A-Za-z]/.test(payload) || (payload.length >= 8 && /[a-z]/.test(payload) && /[A-Z]/.test(payload)) || payload.length >= 20;
}

/**
 * Credentials inside free text: `Bearer x` and `Basic x` (a payload that
 * looks like one, so that "Basic or Bearer credentials" stays prose),
 * `private_token=x` in a URL, GitLab's own token formats (`glpat-`, `glrt-`,
 * `gldt-`, `glptt-`, ..., runner registration tokens `GR1348941...`), and
 * long hex or base64 runs, wherever they appear, the caller's or anyone's.
 */
const SECRET_TEXT: readonly [RegExp, string | Replacer][] = [
  [/\b(Bearer|Basic)\s+([A-Za-z0-9._~+/=-]+)/gi, (match, scheme: string, payload: string) => (looksLikeCredential(payload) ? `${scheme} ${REDACTED}` : match)],
  [/([?&](?:private_token|access_token|job_token|token)=)[^&\s#"']+/gi, `$1${REDACTED}`],
  [/\b(?:glpat|glrt|gldt|glptt|glcbt|glimt|glft|glsoat|gloas|glagent|glffct|glwt)-[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\bGR1348941[A-Za-z0-9_-]{8,}/g, REDACTED],
  // Long hex runs (secrets, signed tokens) and long base64 runs; a 40-character SHA-1, a commit id, stays.
  [/\b(?![0-9a-f]{40}\b)[0-9a-fA-F]{32,}\b/g, REDACTED],
  [/[A-Za-z0-9+/_-]{40,}={0,2}/g, (match: string) => (/[0-9]/.test(match) && /[a-z]/.test(match) && /[A-Z]/.test(match) ? REDACTED : match)],
];

/** Text with every credential pattern replaced. */
export function scrubText(text: string): string {
  let clean = text;
  for (const [pattern, replacement] of SECRET_TEXT) clean = clean.replace(pattern, replacement as string);
  return clean;
}

/** A URL without the user and password it may carry (an import URL's `user:token@`); null for text that is not a URL. */
export function withoutUserInfo(url: string): string | null {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.href;
  } catch {
    return null;
  }
}
