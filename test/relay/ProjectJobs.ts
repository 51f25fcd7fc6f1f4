/**
 * Operations as a Relay frontend writes them, for the trusted documents test:
 * relay-compiler reads the `graphql` tags of this folder (names follow its
 * rule, module name first) and writes their persisted set. The tag is
 * declared here because only the compiler reads it; nothing runs this file.
 */
declare function graphql(strings: TemplateStringsArray): unknown;

export const projectJobsQuery = graphql`
  query ProjectJobsQuery($fullPath: String!, $first: Int!) {
    project(fullPath: $fullPath) {
      pathWithNamespace
      jobs(first: $first) {
        nodes {
          restId
          name
          status
        }
      }
    }
  }
`;

export const projectJobsStarMutation = graphql`
  mutation ProjectJobsStarMutation($id: ID!) {
    projectStar(input: { id: $id }) {
      project {
        starCount
      }
    }
  }
`;

export const projectJobsLogSubscription = graphql`
  subscription ProjectJobsLogSubscription($projectId: ID!, $jobId: ID!) {
    jobLogAppended(projectId: $projectId, jobId: $jobId, tailLines: 5) {
      text
      complete
    }
  }
`;
