/**
 * Summarises a V8 CPU profile (`node --cpu-prof`): the functions with the most
 * self time, and self time by package (node_modules/<name>, node: internals,
 * the project's own files, GC, idle).
 *
 *   npx tsx bench/profile-summary.ts [gateway|plain|file.cpuprofile] [--top 30]
 *
 * `gateway` (the default) and `plain`: the newest profile that `npm run bench --
 * --profile` wrote to bench/results/profiles/<name>/.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '30' } }, allowPositionals: true });

async function newestProfile(name: string): Promise<string> {
  const dir = new URL(`./results/profiles/${name}/`, import.meta.url);
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) throw new Error(`no .cpuprofile in bench/results/profiles/${name} (run npm run bench -- --profile)`);
  const dated = await Promise.all(files.map(async (f) => ({ f, t: (await stat(new URL(f, dir))).mtimeMs })));
  return new URL(dated.sort((a, b) => b.t - a.t)[0]?.f ?? '', dir).pathname;
}

/** Where a frame's code lives: a package, a node internal, the project, or a V8 pseudo-frame. */
function packageOf(url: string, functionName: string): string {
  if (!url) return `(${functionName.replace(/[()]/g, '') || 'anonymous'})`;
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1] ?? url;
  if (url.startsWith('node:')) return 'node: internals';
  const own = /\/(dist\/)?(src|bench)\/(.*)$/.exec(url);
  return own ? `project ${own[2]}/${(own[3] ?? '').split('/').slice(0, -1).join('/') || '.'}` : url;
}

function shortUrl(url: string): string {
  return url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/(dist\/)?(src|bench)\//, '$2/');
}

async function main(): Promise<void> {
  const given = positionals[0] ?? 'gateway';
  const file = given.endsWith('.cpuprofile') ? given : await newestProfile(given);
  const profile = JSON.parse(await readFile(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });

  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const idle = [...selfUs].filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)').reduce((a, [, us]) => a + us, 0);
  const busy = total - idle;
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame || frame.functionName === '(idle)') continue;
    const key = `${frame.functionName || '(anonymous)'}  ${shortUrl(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
    functions.set(key, (functions.get(key) ?? 0) + us);
    const pkg = packageOf(frame.url, frame.functionName);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
  const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
  console.log(
    `${file}\nwall ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s; percentages of busy time\n`,
  );
  console.log('Self time by package');
  for (const [name, us] of [...packages].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`${ms(us)} ${pct(us)}  ${name}`);
  console.log(`\nTop ${values.top} functions by self time`);
  for (const [name, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) console.log(`${ms(us)} ${pct(us)}  ${name}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
