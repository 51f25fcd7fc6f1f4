import { isObjectType, type GraphQLResolveInfo } from 'graphql';
import { describe, expect, it } from 'vitest';
import { buildSchema } from '../../src/schema/index.js';

describe('Node ids', () => {
  const schema = buildSchema();
  const nodeTypes = Object.values(schema.getTypeMap()).filter((t) => isObjectType(t) && t.getInterfaces().some((i) => i.name === 'Node'));

  it('resolve synchronously to the global id, with no promise per node', () => {
    const job = schema.getType('Job');
    if (!isObjectType(job)) throw new Error('no Job type');
    const id = job.getFields().id?.resolve?.({ id: 1001, project_id: 42 }, {}, {}, {} as GraphQLResolveInfo);
    expect(id).toBe('gid://duograph/Job/42/1001');
    const project = schema.getType('Project');
    if (!isObjectType(project)) throw new Error('no Project type');
    expect(project.getFields().id?.resolve?.({ id: 7 }, {}, {}, {} as GraphQLResolveInfo)).toBe('gid://duograph/Project/7');
  });

  it('cover every Node type', () => {
    expect(nodeTypes.length).toBeGreaterThanOrEqual(6);
    for (const type of nodeTypes) {
      if (!isObjectType(type)) continue;
      expect(type.getFields().id?.resolve?.toString(), type.name).not.toMatch(/^async/);
    }
  });
});
