/**
 * The cost plugin's admission: whatever way an execution ends, the estimated
 * calls it held go back to the budget.
 */
import { parse, type ExecutionArgs } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { buildSchema } from '../../src/schema/index.js';
import { useCostLimit } from '../../src/server/limits.js';
import { ConcurrencyLimiter } from '../../src/upstreams/resilience.js';

type ExecuteHook = NonNullable<Plugin['onExecute']>;
type Execute = Parameters<ExecuteHook>[0]['executeFn'];

const schema = buildSchema();

/** Runs the plugin's onExecute as Envelop would, and returns the execute function it leaves in place. */
async function admitted(plugin: Plugin, query: string, execute: Execute): Promise<Execute> {
  let executeFn = execute;
  const args = { schema, document: parse(query), contextValue: {} } as ExecutionArgs;
  await plugin.onExecute?.({
    args,
    executeFn,
    setExecuteFn: (fn: Execute) => {
      executeFn = fn;
    },
    setResultAndStopExecution: () => {
      throw new Error('not expected to stop');
    },
    extendContext: () => {},
    context: {},
  } as unknown as Parameters<ExecuteHook>[0]);
  return executeFn;
}

describe('useCostLimit with a budget', () => {
  const query = '{ projects(first: 5) { nodes { jobs(first: 1) { nodes { id } } } } }';

  it('holds the estimate while the operation runs and gives it back when it ends', async () => {
    const budget = new ConcurrencyLimiter(100);
    const execute = await admitted(useCostLimit(2000, budget), query, async () => {
      expect(budget.inFlight).toBe(6);
      return { data: {} };
    });
    expect(budget.inFlight).toBe(6);
    await execute({} as ExecutionArgs);
    expect(budget.inFlight).toBe(0);
  });

  it('gives the estimate back when execution throws', async () => {
    const budget = new ConcurrencyLimiter(100);
    const execute = await admitted(useCostLimit(2000, budget), query, () => Promise.reject(new Error('executor broke')));
    await expect(execute({} as ExecutionArgs)).rejects.toThrow('executor broke');
    expect(budget.inFlight).toBe(0);
  });
});
