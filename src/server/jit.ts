/**
 * Compiled execution (graphql-jit) for queries and mutations: the profile of
 * the 100x20 benchmark put graphql-js's executor at a seventh of the
 * gateway's CPU. Documents with @defer/@stream, and subscriptions, keep
 * the standard executor, which supports them.
 */
import { useGraphQlJit } from '@envelop/graphql-jit';
import { Kind, visit, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';

const INCREMENTAL = new Set(['defer', 'stream']);
const eligible = new WeakMap<DocumentNode, boolean>();

function canCompile(document: DocumentNode, operationName: string | null | undefined): boolean {
  const known = eligible.get(document);
  if (known !== undefined) return known;
  let ok = true;
  visit(document, {
    Directive(node) {
      if (INCREMENTAL.has(node.name.value)) ok = false;
    },
  });
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operations.find((o) => o.name?.value === operationName) ?? operations[0];
  if (operation?.operation === 'subscription') ok = false;
  eligible.set(document, ok);
  return ok;
}

export function useCompiledExecution(): Plugin {
  return useGraphQlJit({}, { enableIf: (args) => canCompile(args.document, args.operationName) }) as Plugin;
}
