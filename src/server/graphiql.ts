/** The GraphiQL page's opening state: an example query and the sandbox demo token. */

export const EXAMPLE_QUERY = `# duograph: one graph over GitLab and Hubzilla.
# The demo token is already in the headers below.
query Projects {
  projects(first: 5, orderBy: NAME, sort: ASC) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes {
      id
      pathWithNamespace
      visibility
      starCount
      namespace { fullPath }
      forkedFrom { pathWithNamespace }
      languages { name percentage }
    }
  }
}
`;
