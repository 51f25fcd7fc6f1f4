/**
 * Look-ahead into the current field's selection, so a resolver can ask the
 * upstream for exactly what is selected (`statistics=true` only when
 * `statistics` is asked for, the simple project form when nothing more is)
 * instead of paying a second call or a larger answer.
 */
import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/** Calls `visit` with each field of a selection set, through inline fragments and fragment spreads. */
function eachField(selectionSet: SelectionSetNode | undefined, info: GraphQLResolveInfo, visit: (field: FieldNode) => void): void {
  const walk = (set: SelectionSetNode | undefined, seen: Set<string>): void => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        visit(selection);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet, seen);
      } else if (!seen.has(selection.name.value)) {
        // Fragment cycles are rejected by validation; `seen` only guards repeats.
        seen.add(selection.name.value);
        walk(info.fragments[selection.name.value]?.selectionSet, seen);
      }
    }
  };
  walk(selectionSet, new Set());
}

function childFields(selectionSet: SelectionSetNode | undefined, info: GraphQLResolveInfo, name: string): FieldNode[] {
  const found: FieldNode[] = [];
  eachField(selectionSet, info, (field) => {
    if (field.name.value === name) found.push(field);
  });
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
  for (const connection of info.fieldNodes) {
    const nodes = [
      ...childFields(connection.selectionSet, info, 'nodes'),
      ...childFields(connection.selectionSet, info, 'edges').flatMap((edges) => childFields(edges.selectionSet, info, 'node')),
    ];
    for (const node of nodes) eachField(node.selectionSet, info, (field) => names.add(field.name.value));
  }
  return names;
}
