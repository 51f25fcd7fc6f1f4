/**
 * `npm run bench`: upstream calls per query against the minimum the REST API
 * allows, and gateway latency over the upstream critical path, for each
 * workload under bench/workloads, at concurrency 1 and 16. Prints a table and
 * writes bench/results/latest.json. Loopback only; bounded in time.
 *
 *   npm run bench -- --seconds 3 --latency 20
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { startGitlabSandbox } from '../src/sandbox/gitlab/server.js';
import { buildApp } from '../src/server/app.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    latency: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '1,16' },
  },
});
const seconds = Number(values.seconds);
const latencyMs = Number(values.latency);
const concurrencies = String(values.concurrency).split(',').map(Number);

interface Workload {
  name: string;
  query: string;
  minimumCalls: number;
  rounds: number;
}

async function loadWorkloads(): Promise<Workload[]> {
  const dir = new URL('./workloads/', import.meta.url);
  const files = (await readdir(dir)).filter((f) => f.endsWith('.graphql')).sort();
  return Promise.all(
    files.map(async (file) => {
      const query = await readFile(new URL(file, dir), 'utf8');
      const header = (key: string) => Number(new RegExp(`^# ${key}: (\\d+)`, 'm').exec(query)?.[1] ?? 'NaN');
      return { name: file.replace(/\.graphql$/, ''), query, minimumCalls: header('minimum-calls'), rounds: header('rounds') };
    }),
  );
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const sandbox = await startGitlabSandbox({ latencyMs });
  const app = buildApp({ config: loadConfig({ UPSTREAM_CONNECTIONS: '128' }, []), gitlabUrl: new URL(sandbox.url) });
  const url = await app.listen(0, '127.0.0.1');
  const rows: Record<string, number | string>[] = [];
  try {
    for (const workload of await loadWorkloads()) {
      const body = JSON.stringify({ query: workload.query });
      const send = async () => {
        const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'private-token': 'demo-token' }, body });
        const result = (await response.json()) as { errors?: unknown[] };
        if (result.errors) throw new Error(`${workload.name}: ${JSON.stringify(result.errors).slice(0, 300)}`);
      };
      await send();
      for (const concurrency of concurrencies) {
        const latencies: number[] = [];
        const callsBefore = app.gitlab.calls;
        const started = performance.now();
        const deadline = started + seconds * 1000;
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            while (performance.now() < deadline) {
              const t0 = performance.now();
              await send();
              latencies.push(performance.now() - t0);
            }
          }),
        );
        const elapsed = (performance.now() - started) / 1000;
        latencies.sort((a, b) => a - b);
        const criticalPath = workload.rounds * latencyMs;
        const callsPerRequest = (app.gitlab.calls - callsBefore) / latencies.length;
        rows.push({
          workload: workload.name,
          concurrency,
          'req/s': Number((latencies.length / elapsed).toFixed(1)),
          'p50 ms': Number(percentile(latencies, 50).toFixed(1)),
          'p99 ms': Number(percentile(latencies, 99).toFixed(1)),
          'calls/req': Number(callsPerRequest.toFixed(2)),
          'min calls': workload.minimumCalls,
          'critical path ms': criticalPath,
          'p50/critical': criticalPath ? Number((percentile(latencies, 50) / criticalPath).toFixed(2)) : '-',
        });
      }
    }
  } finally {
    await app.close();
    await sandbox.close();
  }
  console.table(rows);
  const out = new URL('./results/', import.meta.url);
  await mkdir(out, { recursive: true });
  await writeFile(new URL('latest.json', out), `${JSON.stringify({ latencyMs, seconds, rows }, null, 2)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
