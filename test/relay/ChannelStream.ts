/**
 * A Relay fragment that pages a channel's stream and refetches itself by the
 * channel's id: Channel is a Node, so relay-compiler generates its refetch
 * query (`node(id:)`). Read by relay-compiler only, as ProjectJobs.ts is.
 */
declare function graphql(strings: TemplateStringsArray): unknown;

export const channelStreamFragment = graphql`
  fragment ChannelStream_channel on Channel
  @refetchable(queryName: "ChannelStreamPaginationQuery")
  @argumentDefinitions(first: { type: "Int", defaultValue: 2 }, after: { type: "String" }) {
    nickname
    stream(first: $first, after: $after) @connection(key: "ChannelStream_stream") {
      edges {
        node {
          title
        }
      }
    }
  }
`;

export const channelStreamQuery = graphql`
  query ChannelStreamQuery {
    channel {
      ...ChannelStream_channel
    }
  }
`;
