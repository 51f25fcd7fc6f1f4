/**
 * Every credential and secret the tests send or the sandboxes hold: none of
 * them may appear in the gateway's logs of a whole test run (test/global-setup.ts).
 */
const basic = (login: string, password: string) => Buffer.from(`${login}:${password}`).toString('base64');

export const TEST_SECRETS: readonly string[] = [
  // Sandbox GitLab tokens (src/sandbox/gitlab/seed.ts) and the CI job token.
  'demo-token',
  'alice-token',
  'bob-token',
  'admin-token',
  'admin-nosudo-token',
  'sandbox-ci-job-token-1013',
  // Sandbox Hubzilla passwords, and the Basic payloads that carry them.
  'demo-pass',
  'alice-pass',
  basic('demo', 'demo-pass'),
  basic('demo@example.com', 'demo-pass'),
  basic('demo-projects', 'demo-pass'),
  basic('alice', 'alice-pass'),
  basic('alice@example.com', 'alice-pass'),
  // Secrets planted in upstream answers (glpat-SENTINEL..., GR1348941SENTINEL...): no log line may repeat them.
  'SENTINEL',
  // Hook and webhook secrets: seeded, and the ones tests set or send.
  'seeded-hook-secret',
  's3cret-hook-token',
  'receiver-secret',
  'gone-secret',
  'sekrit',
  'nope-nope',
  'wrong-token',
  'test-webhook-secret-0123456789',
  'fanout-webhook-secret-0123456789',
  // Sent by test/integration/operability.test.ts to prove redaction (a GraphQL name can hold the first).
  'log_redaction_probe_token',
  'probe-pass-7731',
];
