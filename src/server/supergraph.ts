/**
 * Apollo Federation 2 composition: duograph's subgraph SDL, alone or with
 * other subgraphs, composed into the supergraph SDL a router or gateway
 * serves (`npm run supergraph`).
 */
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { printSchemaSdl } from '../schema/index.js';

export interface SubgraphSource {
  /** Subgraph name in the supergraph, e.g. "duograph". */
  name: string;
  /** URL the router sends the subgraph's operations to. */
  url: string;
  /** The subgraph's SDL, with its federation directives. */
  sdl: string;
}

export class CompositionError extends Error {
  override readonly name = 'CompositionError';
}

/** duograph as a subgraph served at `url` (its GraphQL endpoint). */
export function duographSubgraph(url: string): SubgraphSource {
  return { name: 'duograph', url, sdl: printSchemaSdl() };
}

/** Composes the subgraphs into a supergraph SDL; throws CompositionError listing every composition error. */
export function composeSupergraph(subgraphs: readonly SubgraphSource[]): string {
  const result = composeServices(subgraphs.map((s) => ({ name: s.name, url: s.url, typeDefs: parse(s.sdl) })));
  if (result.errors) throw new CompositionError(`composition failed:\n${result.errors.map((e) => `  ${e.message}`).join('\n')}`);
  return result.supergraphSdl;
}
