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

/** Whether a connection field selects `field` on its nodes, through `edges.node` or `nodes`. */
export function selectsOnNodes(info: GraphQLResolveInfo, field: string): boolean {
  return selects(info, ['edges', 'node', field]) || selects(info, ['nodes', field]);
}
