/**
 * Fields that note what they read: a resolver that reads GitLab itself
 * calls `claiming` for the context to read with, and every stored answer it
 * reads is noted with the field (its path, the value it was resolved on
 * and its info). When the only reads of a kept answer that changed are
 * such fields' own, server/warm-answers.ts resolves those fields again and
 * puts their new values in the kept answer, instead of running the whole
 * operation: after a webhook about one project of a hundred, one project's
 * jobs are resolved again, not a hundred.
 */
import type { GraphQLResolveInfo } from 'graphql';
import type { Claim } from '../request-scope.js';
import type { Context } from './context.js';

/** The context a field's resolver reads with: the same, with a GitLab client that notes its reads, while an answer may be kept. */
export function claiming(ctx: Context, parent: unknown, info: GraphQLResolveInfo): Context {
  const usage = ctx.scope.cache;
  if (!usage?.claims || !usage.sources) return ctx;
  const claim: Claim = { path: pathOf(info.path), parent, field: info, sources: [] };
  usage.claims.push(claim);
  return { ...ctx, gitlab: { ...ctx.gitlab, client: ctx.gitlab.client.claimedBy(claim) } };
}

function pathOf(path: GraphQLResolveInfo['path'] | undefined): (string | number)[] {
  const keys: (string | number)[] = [];
  for (let at = path; at; at = at.prev) keys.push(at.key);
  return keys.reverse();
}
