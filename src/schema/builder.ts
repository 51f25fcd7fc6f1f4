/**
 * The Pothos SchemaBuilder and its plugins. Defines no types: the domain
 * files under gitlab/ add them, and index.ts builds the schema.
 */
import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import DirectivesPlugin from '@pothos/plugin-directives';
import ErrorsPlugin from '@pothos/plugin-errors';
import FederationPlugin from '@pothos/plugin-federation';
import RelayPlugin from '@pothos/plugin-relay';
import type { Context } from './context.js';
import { fieldComplexity } from './cost.js';
import { decodeGlobalId, encodeGlobalId } from './global-id.js';

export const builder = new SchemaBuilder<{
  Context: Context;
  Scalars: {
    DateTime: { Input: Date; Output: string | Date };
    File: { Input: File; Output: never };
    JSON: { Input: unknown; Output: unknown };
    SafeInt: { Input: number; Output: number };
    ID: { Input: string; Output: string | number };
  };
  Connection: { totalCount: number | null };
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
}>({
  // Federation last: it reads the resolvers the others wrap; Directives puts its `@key`s on the printed types (its README's order).
  plugins: [ErrorsPlugin, RelayPlugin, DataloaderPlugin, ComplexityPlugin, DirectivesPlugin, FederationPlugin],
  // Complexity counts upstream calls (cost.ts); the server's cost limit enforces it before execution.
  complexity: { fieldComplexity },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    nodesOnConnection: { description: 'The nodes of the edges, for callers that need no cursors.' },
    nodeFieldOptions: { nullable: false, description: 'The item at the end of the edge.' },
    encodeGlobalID: encodeGlobalId,
    decodeGlobalID: decodeGlobalId,
    nodeTypeOptions: { description: 'An object with a global id, refetchable through `node` and `nodes`.' },
    pageInfoTypeOptions: { description: 'Where a page of a connection sits in the whole list.' },
    idFieldOptions: { description: 'Global id of the object, e.g. `gid://duograph/Project/42`.' },
    nodeQueryOptions: {
      description: 'Fetches any object by its global id; null when it does not exist or is not visible.',
      args: { id: { description: 'Global id of the object.' } },
    },
    nodesQueryOptions: {
      description: 'Fetches objects by global id, in the order asked; null where one does not exist.',
      args: { ids: { description: 'Global ids of the objects.' } },
    },
    cursorFieldOptions: { description: 'Opaque cursor of this edge, for `after` and `before`.' },
    edgesFieldOptions: { nullable: false, description: 'The edges of this page.' },
    pageInfoFieldOptions: { description: 'Pagination information of this page.' },
    hasNextPageFieldOptions: { description: 'Indicates more items follow this page.' },
    hasPreviousPageFieldOptions: { description: 'Indicates items come before this page.' },
    startCursorFieldOptions: { description: 'Cursor of the first edge of the page; null when the page is empty.' },
    endCursorFieldOptions: { description: 'Cursor of the last edge of the page; null when the page is empty.' },
    firstArgOptions: { description: 'Returns the first n items after `after` (0 to 100).' },
    lastArgOptions: { description: 'Returns the last n items before `before` (0 to 100).' },
    afterArgOptions: { description: 'Returns the items after this cursor.' },
    beforeArgOptions: { description: 'Returns the items before this cursor.' },
    defaultConnectionTypeOptions: { description: 'A page of a list, with cursors.' },
    defaultEdgeTypeOptions: { description: 'An item of a list with its cursor.' },
  },
});

builder.queryType({ description: 'Reads from GitLab and Hubzilla.' });
builder.mutationType({ description: 'Writes to GitLab and Hubzilla.' });

builder.globalConnectionField('totalCount', (t) =>
  t.int({
    nullable: true,
    description:
      "Number of items in the whole list; null when the upstream does not report it: above 10,000 items, on pages GitLab serves by keyset, and on lists GitLab never counts (a project's jobs).",
    resolve: (parent) => parent.totalCount,
  }),
);
