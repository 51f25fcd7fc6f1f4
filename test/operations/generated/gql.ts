/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "query ChannelStream($first: Int) {\n  channel {\n    nickname\n    stream(first: $first) {\n      nodes {\n        id\n        title\n        author {\n          hash\n          name\n        }\n      }\n    }\n  }\n}": typeof types.ChannelStreamDocument,
    "query FailedPipelines {\n  project(fullPath: \"platform/core\") {\n    pipelines(first: 5, status: FAILED) {\n      nodes {\n        id\n        restId\n        ref\n        status\n        duration\n        user {\n          username\n        }\n        jobs(statuses: [FAILED]) {\n          nodes {\n            name\n            failureReason\n          }\n        }\n      }\n    }\n  }\n}": typeof types.FailedPipelinesDocument,
    "subscription FollowJobLog {\n  jobLogAppended(projectId: \"platform/core\", jobId: \"1002\", tailLines: 20) {\n    offset\n    text\n    complete\n    status\n    sections {\n      name\n      startedAt\n      duration\n      lines\n    }\n  }\n}": typeof types.FollowJobLogDocument,
    "query WalkAllProjects($after: String) {\n  projects(orderBy: ID, sort: ASC, first: 100, after: $after) {\n    nodes {\n      pathWithNamespace\n    }\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n  }\n}": typeof types.WalkAllProjectsDocument,
    "subscription WatchMainPipelines {\n  pipelineStatusUpdated(projectId: \"demo/playground\", ref: \"main\") {\n    id\n    restId\n    status\n    updatedAt\n  }\n}": typeof types.WatchMainPipelinesDocument,
    "query Entities($representations: [_Any!]!) {\n  _entities(representations: $representations) {\n    __typename\n    ... on Project {\n      id\n      name\n      pathWithNamespace\n    }\n    ... on Job {\n      id\n      name\n      status\n    }\n    ... on Xchan {\n      hash\n      name\n    }\n    ... on ChannelItem {\n      id\n      title\n    }\n  }\n}": typeof types.EntitiesDocument,
    "subscription JobStatusUpdated($projectId: ID!, $jobId: ID) {\n  jobStatusUpdated(projectId: $projectId, jobId: $jobId) {\n    id\n    restId\n    name\n    status\n  }\n}": typeof types.JobStatusUpdatedDocument,
    "query ProjectByPath($fullPath: String!) {\n  project(fullPath: $fullPath) {\n    id\n    name\n    pathWithNamespace\n    visibility\n  }\n}": typeof types.ProjectByPathDocument,
    "query Projects {\n  projects(first: 5, orderBy: NAME, sort: ASC) {\n    totalCount\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n    nodes {\n      id\n      pathWithNamespace\n      visibility\n      starCount\n      namespace {\n        fullPath\n      }\n      forkedFrom {\n        pathWithNamespace\n      }\n      languages {\n        name\n        percentage\n      }\n    }\n  }\n}": typeof types.ProjectsDocument,
    "mutation CreateBillingProject {\n  projectCreate(input: {name: \"Billing\", visibility: INTERNAL}) {\n    project {\n      id\n      pathWithNamespace\n    }\n    errors {\n      field\n      message\n      code\n    }\n  }\n}": typeof types.CreateBillingProjectDocument,
    "query ProjectWithForks {\n  project(fullPath: \"platform/core\") {\n    id\n    name\n    visibility\n    starCount\n    namespace {\n      fullPath\n    }\n    forks(first: 2) {\n      totalCount\n      edges {\n        cursor\n        node {\n          pathWithNamespace\n          forkedFrom {\n            name\n          }\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n    languages {\n      name\n      percentage\n    }\n  }\n}": typeof types.ProjectWithForksDocument,
    "mutation RegisterJobStatusWebhook {\n  jobStatusWebhookRegister(input: {projectId: \"demo/playground\"}) {\n    hook {\n      url\n    }\n    errors {\n      message\n    }\n  }\n}": typeof types.RegisterJobStatusWebhookDocument,
    "query ServiceSdl {\n  _service {\n    sdl\n  }\n}": typeof types.ServiceSdlDocument,
    "subscription WatchPlaygroundJobs {\n  jobStatusUpdated(projectId: \"demo/playground\") {\n    id\n    name\n    status\n    pipeline {\n      restId\n      status\n    }\n  }\n}": typeof types.WatchPlaygroundJobsDocument,
};
const documents: Documents = {
    "query ChannelStream($first: Int) {\n  channel {\n    nickname\n    stream(first: $first) {\n      nodes {\n        id\n        title\n        author {\n          hash\n          name\n        }\n      }\n    }\n  }\n}": types.ChannelStreamDocument,
    "query FailedPipelines {\n  project(fullPath: \"platform/core\") {\n    pipelines(first: 5, status: FAILED) {\n      nodes {\n        id\n        restId\n        ref\n        status\n        duration\n        user {\n          username\n        }\n        jobs(statuses: [FAILED]) {\n          nodes {\n            name\n            failureReason\n          }\n        }\n      }\n    }\n  }\n}": types.FailedPipelinesDocument,
    "subscription FollowJobLog {\n  jobLogAppended(projectId: \"platform/core\", jobId: \"1002\", tailLines: 20) {\n    offset\n    text\n    complete\n    status\n    sections {\n      name\n      startedAt\n      duration\n      lines\n    }\n  }\n}": types.FollowJobLogDocument,
    "query WalkAllProjects($after: String) {\n  projects(orderBy: ID, sort: ASC, first: 100, after: $after) {\n    nodes {\n      pathWithNamespace\n    }\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n  }\n}": types.WalkAllProjectsDocument,
    "subscription WatchMainPipelines {\n  pipelineStatusUpdated(projectId: \"demo/playground\", ref: \"main\") {\n    id\n    restId\n    status\n    updatedAt\n  }\n}": types.WatchMainPipelinesDocument,
    "query Entities($representations: [_Any!]!) {\n  _entities(representations: $representations) {\n    __typename\n    ... on Project {\n      id\n      name\n      pathWithNamespace\n    }\n    ... on Job {\n      id\n      name\n      status\n    }\n    ... on Xchan {\n      hash\n      name\n    }\n    ... on ChannelItem {\n      id\n      title\n    }\n  }\n}": types.EntitiesDocument,
    "subscription JobStatusUpdated($projectId: ID!, $jobId: ID) {\n  jobStatusUpdated(projectId: $projectId, jobId: $jobId) {\n    id\n    restId\n    name\n    status\n  }\n}": types.JobStatusUpdatedDocument,
    "query ProjectByPath($fullPath: String!) {\n  project(fullPath: $fullPath) {\n    id\n    name\n    pathWithNamespace\n    visibility\n  }\n}": types.ProjectByPathDocument,
    "query Projects {\n  projects(first: 5, orderBy: NAME, sort: ASC) {\n    totalCount\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n    nodes {\n      id\n      pathWithNamespace\n      visibility\n      starCount\n      namespace {\n        fullPath\n      }\n      forkedFrom {\n        pathWithNamespace\n      }\n      languages {\n        name\n        percentage\n      }\n    }\n  }\n}": types.ProjectsDocument,
    "mutation CreateBillingProject {\n  projectCreate(input: {name: \"Billing\", visibility: INTERNAL}) {\n    project {\n      id\n      pathWithNamespace\n    }\n    errors {\n      field\n      message\n      code\n    }\n  }\n}": types.CreateBillingProjectDocument,
    "query ProjectWithForks {\n  project(fullPath: \"platform/core\") {\n    id\n    name\n    visibility\n    starCount\n    namespace {\n      fullPath\n    }\n    forks(first: 2) {\n      totalCount\n      edges {\n        cursor\n        node {\n          pathWithNamespace\n          forkedFrom {\n            name\n          }\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n    languages {\n      name\n      percentage\n    }\n  }\n}": types.ProjectWithForksDocument,
    "mutation RegisterJobStatusWebhook {\n  jobStatusWebhookRegister(input: {projectId: \"demo/playground\"}) {\n    hook {\n      url\n    }\n    errors {\n      message\n    }\n  }\n}": types.RegisterJobStatusWebhookDocument,
    "query ServiceSdl {\n  _service {\n    sdl\n  }\n}": types.ServiceSdlDocument,
    "subscription WatchPlaygroundJobs {\n  jobStatusUpdated(projectId: \"demo/playground\") {\n    id\n    name\n    status\n    pipeline {\n      restId\n      status\n    }\n  }\n}": types.WatchPlaygroundJobsDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query ChannelStream($first: Int) {\n  channel {\n    nickname\n    stream(first: $first) {\n      nodes {\n        id\n        title\n        author {\n          hash\n          name\n        }\n      }\n    }\n  }\n}"): (typeof documents)["query ChannelStream($first: Int) {\n  channel {\n    nickname\n    stream(first: $first) {\n      nodes {\n        id\n        title\n        author {\n          hash\n          name\n        }\n      }\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query FailedPipelines {\n  project(fullPath: \"platform/core\") {\n    pipelines(first: 5, status: FAILED) {\n      nodes {\n        id\n        restId\n        ref\n        status\n        duration\n        user {\n          username\n        }\n        jobs(statuses: [FAILED]) {\n          nodes {\n            name\n            failureReason\n          }\n        }\n      }\n    }\n  }\n}"): (typeof documents)["query FailedPipelines {\n  project(fullPath: \"platform/core\") {\n    pipelines(first: 5, status: FAILED) {\n      nodes {\n        id\n        restId\n        ref\n        status\n        duration\n        user {\n          username\n        }\n        jobs(statuses: [FAILED]) {\n          nodes {\n            name\n            failureReason\n          }\n        }\n      }\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "subscription FollowJobLog {\n  jobLogAppended(projectId: \"platform/core\", jobId: \"1002\", tailLines: 20) {\n    offset\n    text\n    complete\n    status\n    sections {\n      name\n      startedAt\n      duration\n      lines\n    }\n  }\n}"): (typeof documents)["subscription FollowJobLog {\n  jobLogAppended(projectId: \"platform/core\", jobId: \"1002\", tailLines: 20) {\n    offset\n    text\n    complete\n    status\n    sections {\n      name\n      startedAt\n      duration\n      lines\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query WalkAllProjects($after: String) {\n  projects(orderBy: ID, sort: ASC, first: 100, after: $after) {\n    nodes {\n      pathWithNamespace\n    }\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n  }\n}"): (typeof documents)["query WalkAllProjects($after: String) {\n  projects(orderBy: ID, sort: ASC, first: 100, after: $after) {\n    nodes {\n      pathWithNamespace\n    }\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "subscription WatchMainPipelines {\n  pipelineStatusUpdated(projectId: \"demo/playground\", ref: \"main\") {\n    id\n    restId\n    status\n    updatedAt\n  }\n}"): (typeof documents)["subscription WatchMainPipelines {\n  pipelineStatusUpdated(projectId: \"demo/playground\", ref: \"main\") {\n    id\n    restId\n    status\n    updatedAt\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Entities($representations: [_Any!]!) {\n  _entities(representations: $representations) {\n    __typename\n    ... on Project {\n      id\n      name\n      pathWithNamespace\n    }\n    ... on Job {\n      id\n      name\n      status\n    }\n    ... on Xchan {\n      hash\n      name\n    }\n    ... on ChannelItem {\n      id\n      title\n    }\n  }\n}"): (typeof documents)["query Entities($representations: [_Any!]!) {\n  _entities(representations: $representations) {\n    __typename\n    ... on Project {\n      id\n      name\n      pathWithNamespace\n    }\n    ... on Job {\n      id\n      name\n      status\n    }\n    ... on Xchan {\n      hash\n      name\n    }\n    ... on ChannelItem {\n      id\n      title\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "subscription JobStatusUpdated($projectId: ID!, $jobId: ID) {\n  jobStatusUpdated(projectId: $projectId, jobId: $jobId) {\n    id\n    restId\n    name\n    status\n  }\n}"): (typeof documents)["subscription JobStatusUpdated($projectId: ID!, $jobId: ID) {\n  jobStatusUpdated(projectId: $projectId, jobId: $jobId) {\n    id\n    restId\n    name\n    status\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query ProjectByPath($fullPath: String!) {\n  project(fullPath: $fullPath) {\n    id\n    name\n    pathWithNamespace\n    visibility\n  }\n}"): (typeof documents)["query ProjectByPath($fullPath: String!) {\n  project(fullPath: $fullPath) {\n    id\n    name\n    pathWithNamespace\n    visibility\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Projects {\n  projects(first: 5, orderBy: NAME, sort: ASC) {\n    totalCount\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n    nodes {\n      id\n      pathWithNamespace\n      visibility\n      starCount\n      namespace {\n        fullPath\n      }\n      forkedFrom {\n        pathWithNamespace\n      }\n      languages {\n        name\n        percentage\n      }\n    }\n  }\n}"): (typeof documents)["query Projects {\n  projects(first: 5, orderBy: NAME, sort: ASC) {\n    totalCount\n    pageInfo {\n      hasNextPage\n      endCursor\n    }\n    nodes {\n      id\n      pathWithNamespace\n      visibility\n      starCount\n      namespace {\n        fullPath\n      }\n      forkedFrom {\n        pathWithNamespace\n      }\n      languages {\n        name\n        percentage\n      }\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation CreateBillingProject {\n  projectCreate(input: {name: \"Billing\", visibility: INTERNAL}) {\n    project {\n      id\n      pathWithNamespace\n    }\n    errors {\n      field\n      message\n      code\n    }\n  }\n}"): (typeof documents)["mutation CreateBillingProject {\n  projectCreate(input: {name: \"Billing\", visibility: INTERNAL}) {\n    project {\n      id\n      pathWithNamespace\n    }\n    errors {\n      field\n      message\n      code\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query ProjectWithForks {\n  project(fullPath: \"platform/core\") {\n    id\n    name\n    visibility\n    starCount\n    namespace {\n      fullPath\n    }\n    forks(first: 2) {\n      totalCount\n      edges {\n        cursor\n        node {\n          pathWithNamespace\n          forkedFrom {\n            name\n          }\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n    languages {\n      name\n      percentage\n    }\n  }\n}"): (typeof documents)["query ProjectWithForks {\n  project(fullPath: \"platform/core\") {\n    id\n    name\n    visibility\n    starCount\n    namespace {\n      fullPath\n    }\n    forks(first: 2) {\n      totalCount\n      edges {\n        cursor\n        node {\n          pathWithNamespace\n          forkedFrom {\n            name\n          }\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n    languages {\n      name\n      percentage\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation RegisterJobStatusWebhook {\n  jobStatusWebhookRegister(input: {projectId: \"demo/playground\"}) {\n    hook {\n      url\n    }\n    errors {\n      message\n    }\n  }\n}"): (typeof documents)["mutation RegisterJobStatusWebhook {\n  jobStatusWebhookRegister(input: {projectId: \"demo/playground\"}) {\n    hook {\n      url\n    }\n    errors {\n      message\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query ServiceSdl {\n  _service {\n    sdl\n  }\n}"): (typeof documents)["query ServiceSdl {\n  _service {\n    sdl\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "subscription WatchPlaygroundJobs {\n  jobStatusUpdated(projectId: \"demo/playground\") {\n    id\n    name\n    status\n    pipeline {\n      restId\n      status\n    }\n  }\n}"): (typeof documents)["subscription WatchPlaygroundJobs {\n  jobStatusUpdated(projectId: \"demo/playground\") {\n    id\n    name\n    status\n    pipeline {\n      restId\n      status\n    }\n  }\n}"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;