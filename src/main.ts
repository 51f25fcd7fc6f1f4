/**
 * Command-line entry: `serve` (default) starts the gateway, with the sandbox
 * GitLab in-process when no GITLAB_URL is set; `sandbox` starts only the
 * sandbox; `print-schema` prints the SDL. SIGTERM and SIGINT stop cleanly.
 */
import { printSchema } from 'graphql';
import { configHelp, ConfigError, loadConfig, type Config } from './config.js';
import { DEMO_USERS, startGitlabSandbox, type GitlabSandbox } from './sandbox/gitlab/server.js';
import { buildApp } from './server/app.js';
import { buildSchema } from './schema/index.js';

const USAGE = `Usage: duograph [serve|sandbox|print-schema] [options]

  serve          start the gateway (default); without GITLAB_URL it starts the sandbox GitLab too
  sandbox        start only the sandbox GitLab and print its URL and demo tokens
  print-schema   print the GraphQL schema (SDL)

Options (each also read from its environment variable; flags win):
${configHelp()}
  --help                               print this help`;

function demoCredentials(): string {
  return DEMO_USERS.map((u) => `  ${u.username.padEnd(8)} Private-Token: ${u.token}${u.admin ? '  (admin)' : ''}`).join('\n');
}

async function startSandbox(config: Config): Promise<GitlabSandbox> {
  return startGitlabSandbox({ port: config.sandboxGitlabPort, latencyMs: config.sandboxLatencyMs });
}

async function serve(config: Config): Promise<() => Promise<void>> {
  const sandbox = config.gitlabUrl ? null : await startSandbox(config);
  const gitlabUrl = config.gitlabUrl ?? new URL(sandbox?.url ?? '');
  const app = buildApp({
    config,
    gitlabUrl,
    graphiqlHeaders: sandbox ? { 'Private-Token': 'demo-token' } : {},
  });
  const url = await app.listen(config.port, config.host);
  console.log(`duograph listening: GraphiQL at ${url.href}`);
  console.log(`GitLab upstream: ${gitlabUrl.origin}${sandbox ? ' (built-in sandbox)' : ''}`);
  if (sandbox) console.log(`Demo credentials (send as a header):\n${demoCredentials()}`);
  return async () => {
    await app.close();
    await sandbox?.close();
  };
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
      process.stdout.write(`${printSchema(buildSchema())}\n`);
      return;
    case 'sandbox': {
      const sandbox = await startSandbox(config);
      console.log(`sandbox GitLab at ${sandbox.url}/api/v4\nDemo credentials:\n${demoCredentials()}`);
      stop = () => sandbox.close();
      break;
    }
    case 'serve':
      stop = await serve(config);
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

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`duograph: ${message}`);
  process.exit(1);
});
