import type { CallTransport } from '../call/protected-call.interception.js';
import { runKeepingExecutedResult } from './executed-result.call.js';
import { graphqlKeyContext } from './graphql-key.context.js';
import { toGraphQLError } from './oncely-graphql.error.js';

/**
 * GraphQL resolvers (`@Mutation`, `@Query`) under oncely. An idempotent one is replayed as its
 * first client received it, field resolvers included; a `@SingleFlight` one shares its value.
 */
export const graphqlCallTransport: CallTransport = {
  keyContext: graphqlKeyContext,
  toError: toGraphQLError,
  runIdempotent: runKeepingExecutedResult,
};
