/**
 * docs/configuration.md's "A command for each option": every option `--help`
 * lists has a line there, and every line is a configuration the gateway accepts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configHelp, loadConfig } from '../../src/config.js';

const readme = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
const section = /## A command for each option\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
const commands = section.split('\n').filter(Boolean);
const options = [...configHelp().matchAll(/(--[a-z-]+) <value>\s+([A-Z_]+)/g)].map((m) => ({ flag: m[1] ?? '', env: m[2] ?? '' }));

/** `A=1 B=2 npm start -- --x 3` as the env and the arguments loadConfig gets. */
function parseCommand(line: string): { env: Record<string, string>; args: string[] } {
  const words = line.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (words[0] && /^[A-Z_]+=/.test(words[0])) {
    const word = words.shift() ?? '';
    env[word.slice(0, word.indexOf('='))] = word.slice(word.indexOf('=') + 1);
  }
  expect(words.slice(0, 2)).toEqual(['npm', 'start']);
  const rest = words.slice(2);
  return { env, args: rest[0] === '--' ? rest.slice(1) : rest };
}

describe('the README configuration commands', () => {
  it('has a command for every option', () => {
    const missing = options.filter((o) => !commands.some((c) => c.startsWith(`${o.env}=`) || c.includes(` ${o.flag} `)));
    expect(missing.map((o) => o.env)).toEqual([]);
  });

  it.each(commands)('accepts `%s`', (command) => {
    const { env, args } = parseCommand(command);
    expect(() => loadConfig(env, args)).not.toThrow();
  });
});
