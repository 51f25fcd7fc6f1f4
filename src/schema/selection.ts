/**
 * Look-ahead into the current field's selection, so a resolver can ask the
 * upstream for exactly what is selected (`statistics=true` only when
 * `statistics` is asked for) instead of paying a second call later.
 */
import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

function childFields(selectionSet: SelectionSetNode | undefined, info: GraphQLResolveInfo, name: string): FieldNode[] {
  const found: FieldNode[] = [];
  const visit = (set: SelectionSetNode | undefined, seen: Set<string>): void => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value === name) found.push(selection);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        visit(selection.selectionSet, seen);
      } else if (!seen.has(selection.name.value)) {
        // Fragment cycles are rejected by validation; `seen` only guards repeats.
        seen.add(selection.name.value);
        visit(info.fragments[selection.name.value]?.selectionSet, seen);
      }
    }
  };
  visit(selectionSet, new Set());
  return found;
}

/** Whether the field being resolved selects `path` below it, e.g. ['edges', 'node', 'statistics']. */
export function selects(info: GraphQLResolveInfo, path: readonly string[]): boolean {
  let level: FieldNode[] = [...info.fieldNodes];
  for (const name of path) {
    level = level.flatMap((node) => childFields(node.selectionSet, info, name));
    if (level.length === 0) return false;
  }
  return true;
}

/** The names of the fields a connection field selects on its nodes, through `edges.node` and `nodes`. */
export function fieldsOnNodes(info: GraphQLResolveInfo): Set<string> {
  const names = new Set<string>();
  const nodes = [...info.fieldNodes].flatMap((field) => [
    ...childFields(field.selectionSet, info, 'nodes'),
    ...childFields(field.selectionSet, info, 'edges').flatMap((edges) => childFields(edges.selectionSet, info, 'node')),
  ]);
  for (const node of nodes) collectFieldNames(node.selectionSet, info, names, new Set());
  return names;
}

function collectFieldNames(set: SelectionSetNode | undefined, info: GraphQLResolveInfo, names: Set<string>, seen: Set<string>): void {
  for (const selection of set?.selections ?? []) {
    if (selection.kind === Kind.FIELD) names.add(selection.name.value);
    else if (selection.kind === Kind.INLINE_FRAGMENT) collectFieldNames(selection.selectionSet, info, names, seen);
    else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      collectFieldNames(info.fragments[selection.name.value]?.selectionSet, info, names, seen);
    }
  }
}
