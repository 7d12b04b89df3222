import type { CallTransport } from '../call/protected-call.interception.js';
import { graphqlKeyContext } from './graphql-key.context.js';
import { toGraphQLError } from './oncely-graphql.error.js';

/** GraphQL resolvers (`@Mutation`, `@Query`) under oncely. */
export const graphqlCallTransport: CallTransport = {
  keyContext: graphqlKeyContext,
  toError: toGraphQLError,
};
