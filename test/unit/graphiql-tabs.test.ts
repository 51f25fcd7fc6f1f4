/** GraphiQL's example tabs read whole in a narrow editor: their comments wrap at 60 columns, and each tab is one valid document. */
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { graphiqlTabs } from '../../src/server/graphiql.js';

describe('the GraphiQL tabs', () => {
  it.each([
    ['the sandbox', { 'Private-Token': 'demo-token' }],
    ['real servers', {}],
  ])('keep every comment line within 60 columns, in front of %s', (_name, headers) => {
    const tabs = graphiqlTabs(headers);
    expect(tabs).toHaveLength(6);
    for (const tab of tabs) {
      for (const line of tab.query.split('\n').filter((l) => l.startsWith('#'))) expect(line.length, line).toBeLessThanOrEqual(60);
      expect(() => parse(tab.query)).not.toThrow();
    }
    // The first tab points agents' builders at the MCP endpoint and its docs.
    expect(tabs[0]?.query).toContain('MCP tools at /mcp (docs/mcp.md)');
  });
});
