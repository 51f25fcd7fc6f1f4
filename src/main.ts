#!/usr/bin/env node
/**
 * Command-line entry (`duograph`, `npm start`): `serve` (default) starts the
 * gateway, with the sandbox GitLab in-process when no GITLAB_URL is set;
 * `sandbox` starts only the sandbox; `print-schema` prints the SDL. SIGTERM
 * and SIGINT stop cleanly. A start that cannot succeed (bad configuration, a
 * busy port, a host that is not this machine's, Redis out of reach) prints one
 * line and exits 2.
 */
import { setFlagsFromString } from 'node:v8';
import { apiBase, configHelp, ConfigError, GITLAB_API_PATH, HUBZILLA_API_PATH, loadConfig, type Config } from './config.js';
import type { GitlabSandbox } from './sandbox/gitlab/server.js';
import type { HubzillaSandbox } from './sandbox/hubzilla/server.js';
import { buildApp, leaseTtlMs } from './server/app.js';
import type { UpstreamReadiness } from './server/health.js';
import { upstreamLabel, upstreamSetting } from './upstreams/http.js';
import { PersistedDocumentsError } from './server/persisted-documents.js';
import type { Tracing } from './server/tracing.js';
import { printSchemaSdl } from './schema/index.js';
// The sandboxes and Apollo composition load only when used: a gateway in front of real upstreams does not carry them.

const USAGE = `Usage: duograph [serve|sandbox|print-schema|supergraph] [options]

  serve          start the gateway (default); without GITLAB_URL / HUBZILLA_URL it starts the sandbox GitLab / Hubzilla too
  sandbox        start only the sandboxes (GitLab, Hubzilla) and print their URLs and demo credentials
  print-schema   print the GraphQL schema (SDL, a Federation 2 subgraph with its @key directives)
  supergraph     print the supergraph SDL of duograph alone, served at PUBLIC_URL (else http://localhost:PORT)

Options (each also read from its environment variable; flags win):
${configHelp()}
  --help                               print this help`;

async function demoCredentials(): Promise<string> {
  const { DEMO_USERS } = await import('./sandbox/gitlab/server.js');
  return DEMO_USERS.map((u) => `  ${u.username.padEnd(8)} Private-Token: ${u.token}${u.admin ? '  (admin)' : ''}`).join('\n');
}

/** The sandbox Hubzilla's demo login (seed.ts): channel `demo` of account demo@example.com. */
const HUBZILLA_DEMO = { login: 'demo', email: 'demo@example.com', password: 'demo-pass' } as const;
const HUBZILLA_DEMO_HEADER = `Basic ${Buffer.from(`${HUBZILLA_DEMO.login}:${HUBZILLA_DEMO.password}`).toString('base64')}`;

function hubzillaDemoCredentials(): string {
  return [
    `  X-Hubzilla-Authorization: ${HUBZILLA_DEMO_HEADER}  (${HUBZILLA_DEMO.login} / ${HUBZILLA_DEMO.password}; or ${HUBZILLA_DEMO.email})`,
    '  channels: demo, demo-projects (same account; pick with channel(nickname:)); alice / alice-pass (second account)',
  ].join('\n');
}

async function startHubzilla(config: Config): Promise<HubzillaSandbox> {
  const { startHubzillaSandbox } = await import('./sandbox/hubzilla/server.js');
  return startHubzillaSandbox({ port: config.sandboxHubzillaPort, latencyMs: config.sandboxLatencyMs, version: config.sandboxHubzillaVersion });
}

async function startSandbox(config: Config): Promise<GitlabSandbox> {
  const { startGitlabSandbox } = await import('./sandbox/gitlab/server.js');
  // The demo pipeline runs again every minute, so a newcomer's subscription always sees changes.
  return startGitlabSandbox({
    port: config.sandboxGitlabPort,
    latencyMs: config.sandboxLatencyMs,
    demoPipelineEveryMs: 60_000,
    rateLimitPerMinute: config.sandboxRateLimitPerMinute,
  });
}

/**
 * WORKERS > 1, in the primary: the sandbox (once, when no upstream is
 * configured), then the workers, which get its URLs; returns the drain.
 */
async function servePrimary(config: Config): Promise<() => Promise<void>> {
  const { startPrimary } = await import('./server/cluster.js');
  const sandbox = config.gitlabUrl ? null : await startSandbox(config);
  const hubzillaSandbox = config.hubzillaUrl ? null : await startHubzilla(config);
  const env: Record<string, string> = {};
  if (sandbox) env.GITLAB_URL = sandbox.url;
  if (hubzillaSandbox) env.HUBZILLA_URL = hubzillaSandbox.url;
  if (sandbox || hubzillaSandbox) env.SANDBOX_CREDENTIALS = 'true';
  const primary = startPrimary({ workers: config.workers, env, log: (line) => console.log(`duograph: ${line}`), shutdownTimeoutMs: config.shutdownTimeoutMs });
  const url = await primary.ready;
  console.log(`duograph listening with ${config.workers} workers: GraphiQL at ${url.href}`);
  if (sandbox) console.log(`GitLab upstream: ${sandbox.url} (built-in sandbox)\nDemo credentials (send as a header):\n${await demoCredentials()}`);
  if (hubzillaSandbox)
    console.log(
      `Hubzilla upstream: ${hubzillaSandbox.url} (built-in sandbox, Hubzilla ${config.sandboxHubzillaVersion})\nHubzilla demo credentials (send as a header):\n${hubzillaDemoCredentials()}`,
    );
  return async () => {
    await primary.stop();
    await sandbox?.close();
    await hubzillaSandbox?.close();
  };
}

/** A worker of a group: the gateway, with the group's bus, readiness and metrics. */
async function serveWorker(config: Config): Promise<() => Promise<void>> {
  const { reportReady, workerOptions } = await import('./server/cluster.js');
  if (config.heapGrowingPercent > 0) setFlagsFromString(`--heap-growing-percent=${config.heapGrowingPercent}`);
  // The tracer starts before the app and its logger: its reports wait for them.
  let appLog: ((message: string) => void) | null = null;
  const tracing = await startTracing(config, (message) => appLog?.(message));
  const app = buildApp({
    config,
    tracing,
    gitlabUrl: config.gitlabUrl ?? new URL('http://localhost'),
    hubzillaUrl: config.hubzillaUrl ?? undefined,
    processMetrics: true,
    worker: workerOptions(leaseTtlMs(config)),
    graphiqlHeaders: config.sandboxCredentials ? { 'Private-Token': 'demo-token', 'X-Hubzilla-Authorization': HUBZILLA_DEMO_HEADER } : {},
  });
  appLog = (message) => app.logger.warn(message);
  reportReady(await app.listen(config.port, config.host), app.metrics.registry);
  return () => app.close();
}

/** OpenTelemetry, when an OTLP endpoint is set; the SDK is not loaded otherwise. */
async function startTracing(config: Config, log: (message: string) => void): Promise<Tracing | null> {
  if (!config.tracing) return null;
  const tracing = await import('./server/tracing.js');
  return tracing.startTracing(config.tracing, { resolvers: config.traceResolvers.length > 0, log });
}

async function serve(config: Config): Promise<() => Promise<void>> {
  if (config.workers > 1) {
    const { default: cluster } = await import('node:cluster');
    return cluster.isPrimary ? servePrimary(config) : serveWorker(config);
  }
  // V8 lets the old generation grow to up to 4x what a full collection keeps; under a wide fan-out most of
  // that is dead pages and queued calls. 2x takes peak RSS on 100x20 from ~260 to ~200 MB for ~7% CPU (README, Performance).
  // V8 reads this flag at each collection, so setting it now takes effect.
  if (config.heapGrowingPercent > 0) setFlagsFromString(`--heap-growing-percent=${config.heapGrowingPercent}`);
  const sandbox = config.gitlabUrl ? null : await startSandbox(config);
  const gitlabUrl = config.gitlabUrl ?? new URL(sandbox?.url ?? '');
  const hubzillaSandbox = config.hubzillaUrl ? null : await startHubzilla(config);
  const hubzillaUrl = config.hubzillaUrl ?? new URL(hubzillaSandbox?.url ?? '');
  let appLog: ((message: string) => void) | null = null;
  const tracing = await startTracing(config, (message) => appLog?.(message));
  const app = buildApp({
    config,
    tracing,
    gitlabUrl,
    hubzillaUrl,
    processMetrics: true,
    graphiqlHeaders: {
      ...(sandbox ? { 'Private-Token': 'demo-token' } : {}),
      ...(hubzillaSandbox ? { 'X-Hubzilla-Authorization': HUBZILLA_DEMO_HEADER } : {}),
    },
  });
  appLog = (message) => app.logger.warn(message);
  const url = await app.listen(config.port, config.host);
  console.log(`duograph listening: GraphiQL at ${url.href}`);
  console.log(`GitLab upstream: ${gitlabUrl.origin}${sandbox ? ' (built-in sandbox)' : ''}; its API at ${apiBase(gitlabUrl, GITLAB_API_PATH).href}`);
  console.log(
    `Webhook receiver: ${app.webhookUrl()} (register it with the jobStatusWebhookRegister mutation; pub/sub: ${config.redisUrl ? 'Redis' : 'in memory'})`,
  );
  if (sandbox) console.log(`Demo credentials (send as a header):\n${await demoCredentials()}`);
  console.log(
    `Hubzilla upstream: ${hubzillaUrl.origin}${hubzillaSandbox ? ` (built-in sandbox, Hubzilla ${config.sandboxHubzillaVersion})` : ''}; its API at ${apiBase(hubzillaUrl, HUBZILLA_API_PATH).href}`,
  );
  if (hubzillaSandbox) console.log(`Hubzilla demo credentials (send as a header):\n${hubzillaDemoCredentials()}`);
  // The host only: the URL's path and the export headers may carry a collector's key.
  if (config.tracing) console.log(`Traces: OTLP ${config.tracing.protocol} to ${config.tracing.url.host} (service ${config.tracing.serviceName})`);
  if (config.persistedDocuments) console.log(`Trusted documents: ${config.persistedDocumentsOnly ? 'only these run' : 'accepted by id beside any query'}`);
  // What each API said, once: the gateway starts anyway (an upstream may come up later), but a wrong address shows now.
  void app.checkUpstreams().then((found) => {
    for (const [name, readiness] of Object.entries(found)) {
      const line = upstreamFinding(name, readiness);
      console.log(line);
      if (!readiness.reachable) app.logger.warn(line);
    }
  });
  return async () => {
    await app.close();
    await sandbox?.close();
    await hubzillaSandbox?.close();
  };
}

/** One line of the start banner on what an upstream's API answered, naming the setting to check when it is not there. */
function upstreamFinding(name: string, readiness: UpstreamReadiness): string {
  const label = upstreamLabel(name);
  const setting = upstreamSetting(name);
  if (readiness.error === 'API_NOT_FOUND')
    return `${label} API: not found (404 at its root): check ${setting}; lookups answer UPSTREAM_ERROR until it is right`;
  if (!readiness.reachable)
    return `${label} API: not reachable (${readiness.error ?? `HTTP ${readiness.status}`}): check ${setting}; the gateway serves and retries`;
  return `${label} API: found (HTTP ${readiness.status} in ${readiness.latencyMs} ms)`;
}

/** Why the gateway cannot start, in one line naming the setting to change; null for anything else. */
function startFailure(error: unknown, config: Config): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  const where = `${config.host ?? '0.0.0.0'}:${config.port}`;
  // The port that is busy may be a sandbox's: name the setting that holds it.
  const busy = (error as { port?: unknown } | null)?.port;
  if (code === 'EADDRINUSE' && busy !== 0 && busy === config.sandboxGitlabPort) {
    return `port ${busy} of the sandbox GitLab is already in use (set SANDBOX_GITLAB_PORT or --sandbox-gitlab-port)`;
  }
  if (code === 'EADDRINUSE' && busy !== 0 && busy === config.sandboxHubzillaPort) {
    return `port ${busy} of the sandbox Hubzilla is already in use (set SANDBOX_HUBZILLA_PORT or --sandbox-hubzilla-port)`;
  }
  if (code === 'EADDRINUSE') return `port ${config.port} is already in use on ${config.host ?? 'every address'} (set PORT or --port)`;
  if (code === 'EACCES') return `not allowed to listen on ${where} (ports below 1024 need privileges; set PORT or --port)`;
  if (code === 'ENOTFOUND' || code === 'EADDRNOTAVAIL' || code === 'EAI_AGAIN') {
    return `cannot listen on host "${config.host ?? ''}": it is not an address of this machine (set HOST or --host)`;
  }
  const path = (error as { path?: unknown } | null)?.path;
  if (config.logFile !== null && path === config.logFile && typeof code === 'string') {
    return `LOG_FILE "${config.logFile}" cannot be opened for appending (${code}); set LOG_FILE to a file the gateway may write, or leave it out for stdout`;
  }
  if (error instanceof PersistedDocumentsError) return `PERSISTED_DOCUMENTS: ${error.message}`;
  if (error instanceof ConfigError) return error.message;
  // The Redis bus refuses to start rather than lose events across instances (event-bus.ts).
  if (error instanceof Error && error.message.startsWith('Redis (REDIS_URL)')) return error.message;
  return null;
}

async function main(argv: readonly string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    return;
  }
  const [first, ...rest] = argv;
  const command = first && !first.startsWith('-') ? first : 'serve';
  const args = first && !first.startsWith('-') ? rest : argv;
  let config: Config;
  try {
    config = loadConfig(process.env, args);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`duograph: ${error.message}`);
      process.exitCode = 2;
      return;
    }
    throw error;
  }
  let stop: () => Promise<void>;
  switch (command) {
    case 'print-schema':
      process.stdout.write(`${printSchemaSdl()}\n`);
      return;
    case 'supergraph': {
      const base = config.publicUrl?.href.replace(/\/$/, '') ?? `http://localhost:${config.port}`;
      const { composeSupergraph, duographSubgraph } = await import('./server/supergraph.js');
      process.stdout.write(`${composeSupergraph([duographSubgraph(`${base}/graphql`)])}\n`);
      return;
    }
    case 'sandbox': {
      const sandbox = await startSandbox(config);
      console.log(`sandbox GitLab: its API at ${sandbox.url}/api/v4\nDemo credentials:\n${await demoCredentials()}`);
      const hubzillaSandbox = await startHubzilla(config);
      console.log(`sandbox Hubzilla: its API at ${hubzillaSandbox.url}/api/z/1.0\nDemo credentials:\n${hubzillaDemoCredentials()}`);
      // Ready to paste in front of `npm start` in another terminal.
      console.log(`To serve in front of these:\nGITLAB_URL=${sandbox.url} HUBZILLA_URL=${hubzillaSandbox.url} npm start`);
      stop = async () => {
        await sandbox.close();
        await hubzillaSandbox.close();
      };
      break;
    }
    case 'serve':
      try {
        stop = await serve(config);
      } catch (error) {
        const failure = startFailure(error, config);
        if (failure === null) throw error;
        console.error(`duograph: cannot start: ${failure}`);
        process.exit(2);
      }
      break;
    default:
      console.error(`duograph: unknown command "${command}" (see --help)`);
      process.exitCode = 2;
      return;
  }
  const shutdown = () => {
    void stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

// A closed stdout (`duograph | head`, a log pipe that died) is not the gateway's failure: stop writing, keep serving.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`duograph: ${message}`);
  process.exit(1);
});
