/**
 * Operation limits, checked before any resolver runs, so a refused operation
 * costs no upstream call: GraphQL Armor's max depth, aliases, tokens and
 * directives and its field-suggestion blocker, a cost limit in upstream calls
 * from @pothos/plugin-complexity's estimate (schema/cost.ts), and a cap on
 * the size of a non-multipart request body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { blockFieldSuggestionsPlugin } from '@escape.tech/graphql-armor-block-field-suggestions';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { createComplexityRule } from '@pothos/plugin-complexity';
import { getOperationAST, type GraphQLError, validate, visit, type DocumentNode, type GraphQLSchema, type ValidationContext } from 'graphql';
import { getVariableValues } from 'graphql/execution/values.js';
import { InputError } from '../errors.js';
import { createGraphQLError, finalAsyncIterator, isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Config } from '../config.js';
import type { ConcurrencyLimiter } from '../upstreams/resilience.js';
import { refuseOversized } from './oversize.js';

type LimitConfig = Pick<Config, 'maxDepth' | 'maxAliases' | 'maxTokens' | 'maxDirectives' | 'maxCost' | 'fieldSuggestions'>;

/** The Yoga plugins that enforce the operation limits of `config`, and admit operations within `budget`. */
export function limitPlugins(config: LimitConfig, budget: ConcurrencyLimiter | null = null): Plugin[] {
  const plugins: Plugin[] = [
    maxTokensPlugin({ n: config.maxTokens }) as Plugin,
    // Armor throws its refusal out of validation by default: reported instead, as the coded error limitError makes.
    maxDepthPlugin({ n: config.maxDepth, ignoreIntrospection: true, flattenFragments: true, ...REPORTED }),
    maxAliasesPlugin({ n: config.maxAliases, ...REPORTED }),
    maxDirectivesPlugin({ n: config.maxDirectives, ...REPORTED }),
    useCostLimit(config.maxCost, budget),
    useLimitCodes(),
    useVariableRefusals(),
  ];
  if (!config.fieldSuggestions) plugins.push(blockFieldSuggestionsPlugin({ mask: SUGGESTIONS_HIDDEN }));
  return plugins;
}

/** What stands for a hidden "Did you mean" suggestion: where the names are, and the setting that shows them. */
export const SUGGESTIONS_HIDDEN =
  "(Suggestions are hidden: the schema's names are in GraphiQL's Docs, by introspection, or in schema/schema.graphql; FIELD_SUGGESTIONS=true shows them here.)";

/** GraphQL Armor's refusals, as its plugins word them ("Syntax Error: Query depth limit of 15 exceeded, found 16."). */
const ARMOR_REFUSAL = /^Syntax Error: (Query depth|Aliases|Directives|Token) limit of (\d+) exceeded(?:, found (\d+))?\.$/;

/** An Armor refusal as an OPERATION_LIMIT error with the limit and what was found, answered 400; other errors as they are. */
function limitError(error: GraphQLError): GraphQLError {
  const match = ARMOR_REFUSAL.exec(error.message);
  if (!match) return error;
  const [, what, limit, found] = match;
  const limitName = { 'Query depth': 'depth', Aliases: 'aliases', Directives: 'directives', Token: 'tokens' }[what ?? ''] ?? 'operation';
  return createGraphQLError(error.message.replace(/^Syntax Error: /, ''), {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    extensions: { code: 'OPERATION_LIMIT', limit: { name: limitName, max: Number(limit), ...(found ? { found: Number(found) } : {}) }, http: { status: 400 } },
  });
}

/** Armor's options that report a refusal as a validation error with a code, instead of throwing it. */
const REPORTED = {
  propagateOnRejection: false,
  onReject: [(context: ValidationContext | null, error: GraphQLError) => context?.reportError(limitError(error))],
};

/** What graphql-js adds as the last error when it stops validating (after its `maxErrors`, 100). */
const VALIDATION_ABORTED = 'Too many validation errors, error limit reached. Validation aborted.';

/** graphql-js's abort, saying which limit stopped it: the errors before it are kept, the first of them first. */
function validationAborted(reported: number): GraphQLError {
  return createGraphQLError(
    `Validation stopped after ${reported} errors (the most reported for one document); the errors above are the first ones, fix them and send again.`,
    { extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit: { name: 'validationErrors', max: reported } } },
  );
}

/**
 * Gives GraphQL Armor's token refusal a code, the limit and the status 400,
 * as REPORTED does for the depth, alias and directive refusals (they came as
 * code-less "Syntax Error"s, with 200 for all but tokens).
 */
function useLimitCodes(): Plugin {
  return {
    // The token limit refuses while parsing: its error replaces the parse result.
    onParse:
      () =>
      ({ result, replaceParseResult }) => {
        if (result instanceof Error && ARMOR_REFUSAL.test(result.message)) replaceParseResult(limitError(result as GraphQLError));
      },
    // A document over a limit is refused for that, once: not also for each of its 100 unknown directives.
    onValidate:
      () =>
      ({ result, setResult }) => {
        const refusals = result.filter((error) => error.extensions?.code === 'OPERATION_LIMIT');
        if (refusals.length > 0 && refusals.length < result.length) setResult(refusals);
        else if (result.at(-1)?.message === VALIDATION_ABORTED) setResult([...result.slice(0, -1), validationAborted(result.length - 1)]);
      },
  };
}

/**
 * Answers variables that do not fit their types (`"abc"` for an Int, a
 * missing required one) with 400 and BAD_USER_INPUT, before execution, as
 * GraphQL over HTTP asks: the compiled executor (graphql-jit) reported them
 * from inside execution with 200. graphql-js's own coercion decides.
 */
function useVariableRefusals(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName ?? undefined);
      if (!operation?.variableDefinitions?.length) return;
      const coerced = getVariableValues(args.schema, operation.variableDefinitions, (args.variableValues ?? {}) as Record<string, unknown>, { maxErrors: 10 });
      if (!coerced.errors) return;
      setResultAndStopExecution({
        errors: coerced.errors.map((error) =>
          createGraphQLError(error.message, { nodes: error.nodes, extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } }),
        ),
      });
    },
  };
}

interface CostArgs {
  schema: GraphQLSchema;
  document: DocumentNode;
  contextValue: unknown;
  variableValues?: Record<string, unknown> | null;
  operationName?: string | null;
}

/**
 * The estimated upstream calls of the operation `args` will run, or a
 * refusal when it is above `max`. Estimated with the request's variables
 * and context, so `first: $n` counts as asked; errors about the variables
 * themselves are left to execution to report.
 */
export function checkCost(args: CostArgs, max: number): { cost: number; error: GraphQLError | null } {
  let cost = 0;
  let refusal: GraphQLError | null = null;
  try {
    validate(args.schema, withoutTypename(args.document), [
      createComplexityRule({
        context: (args.contextValue ?? {}) as object,
        variableValues: args.variableValues ?? {},
        operationName: args.operationName ?? undefined,
        validate: (result, report) => {
          cost = Math.max(cost, result.complexity);
          if (result.complexity > max) {
            refusal = createGraphQLError(
              `The operation could cause up to ${result.complexity} upstream calls, more than the limit of ${max}: ask for smaller pages (first/last) or fewer nested lists.`,
              // Refused before execution: 400, as the other limits (GraphQL over HTTP, application/graphql-response+json).
              { extensions: { code: 'BAD_USER_INPUT', cost: { estimated: result.complexity, limit: max }, http: { status: 400 } } },
            );
            report(refusal);
          }
        },
      }),
    ]);
  } catch (error) {
    // An operation whose cost cannot be estimated does not run; an argument the estimate could not read says what is wrong with it.
    refusal =
      error instanceof InputError
        ? createGraphQLError(error.message, { extensions: { code: error.code, field: error.field, http: { status: 400 } } })
        : createGraphQLError('The cost of the operation could not be estimated.', { extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } });
  }
  return { cost, error: refusal };
}

const stripped = new WeakMap<DocumentNode, DocumentNode>();

/**
 * The document without `__typename` selections, which cost nothing: the
 * plugin counts a meta field as 1, and clients such as Apollo's add one to
 * every selection set, which would make a list of 100 cost 100 more.
 */
function withoutTypename(document: DocumentNode): DocumentNode {
  let result = stripped.get(document);
  if (!result) {
    result = visit(document, { Field: (node) => (node.name.value === '__typename' ? null : undefined) });
    stripped.set(document, result);
  }
  return result;
}

/** Estimates kept per document, each for this many operation-and-variables combinations at most. */
const COSTS_PER_DOCUMENT = 32;

type ExecuteHook = NonNullable<Plugin['onExecute']>;
type Execute = Parameters<ExecuteHook>[0]['executeFn'];

/** `execute`, calling `release` once its result is complete: at once, or when an incremental result ends. */
function releasingAfter(execute: Execute, release: () => void): Execute {
  return async (args) => {
    try {
      const result = await execute(args);
      if (isAsyncIterable(result)) return finalAsyncIterator(result, release);
      release();
      return result;
    } catch (error) {
      release();
      throw error;
    }
  };
}

/** The estimate of each operation run, by its context, for its trace span. */
const operationCosts = new WeakMap<object, number>();

/** The estimated upstream calls of the operation with this context, once useCostLimit has judged it. */
export function costOf(contextValue: unknown): number | undefined {
  return typeof contextValue === 'object' && contextValue !== null ? operationCosts.get(contextValue) : undefined;
}

function rememberCost(contextValue: unknown, cost: number): void {
  if (typeof contextValue === 'object' && contextValue !== null) operationCosts.set(contextValue, cost);
}

/**
 * Refuses, before execution, an operation estimated to cause more than `max`
 * upstream calls; with a `budget`, a query or mutation then waits until its
 * estimate fits among the operations running. The estimate is a validation
 * pass over the document, a few percent of a small query's CPU, so it is kept
 * per parsed document (Yoga reuses one per query text) and per operation name
 * and variables.
 */
export function useCostLimit(max: number, budget: ConcurrencyLimiter | null = null): Plugin {
  const estimates = new WeakMap<DocumentNode, Map<string, { cost: number; error: GraphQLError | null }>>();
  const estimate = (args: CostArgs): { cost: number; error: GraphQLError | null } => {
    let byInput = estimates.get(args.document);
    if (!byInput) estimates.set(args.document, (byInput = new Map()));
    const key = `${args.operationName ?? ''}\n${JSON.stringify(args.variableValues ?? {})}`;
    const known = byInput.get(key);
    if (known !== undefined) return known;
    const result = checkCost(args, max);
    if (byInput.size >= COSTS_PER_DOCUMENT) byInput.clear();
    byInput.set(key, result);
    return result;
  };
  return {
    onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const { cost, error } = estimate(args);
      rememberCost(args.contextValue, cost);
      if (error) {
        setResultAndStopExecution({ errors: [error] });
        return;
      }
      if (!budget) return;
      // First come, first served, weighed by the estimate: a large operation is not starved by small ones.
      const signal = (args.contextValue as { request?: Request } | undefined)?.request?.signal;
      return budget.acquire(signal, cost).then(
        (release) => setExecuteFn(releasingAfter(executeFn, release)),
        (reason: unknown) => {
          if (!signal?.aborted) throw reason;
          // Nobody reads this answer: the client is gone. What matters is that nothing runs.
          setResultAndStopExecution({ errors: [createGraphQLError('The request was aborted while it waited for its turn.')] });
        },
      );
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const { cost, error } = estimate(args);
      rememberCost(args.contextValue, cost);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
  };
}

/**
 * Reads a non-multipart POST body up to `max` bytes and hands it to Yoga as
 * `req.body` (which whatwg-node's adapter then uses as is). Above `max`, by
 * Content-Length or while reading, answers 413 and returns false; Yoga is
 * not called. Multipart bodies are bounded by the form-data limits instead.
 */
export async function readBoundedBody(req: IncomingMessage, res: ServerResponse, max: number): Promise<boolean> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) {
    refuseTooLarge(req, res, max);
    return false;
  }
  // Listeners, not `for await`: leaving that loop early destroys the request, and the client never reads the 413.
  const body = await new Promise<Buffer | null>((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) return void chunks.push(chunk);
      req.off('data', onData);
      req.off('end', onEnd);
      refuseTooLarge(req, res, max);
      resolve(null);
    };
    const onEnd = () => resolve(Buffer.concat(chunks));
    req.on('data', onData);
    req.once('end', onEnd);
    // The client went away mid-body: nothing to answer.
    req.once('error', () => resolve(null));
  });
  if (!body) return false;
  (req as IncomingMessage & { body?: Buffer }).body = body;
  return true;
}

function refuseTooLarge(req: IncomingMessage, res: ServerResponse, max: number): void {
  refuseOversized(req, res, max, { errors: [{ message: `The request body is larger than ${max} bytes.`, extensions: { code: 'BAD_USER_INPUT' } }] });
}
