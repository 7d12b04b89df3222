import { SetMetadata } from '@nestjs/common';
import { startExecutedResultCapture, type GraphQLResponseBody } from './executed-result.capture.js';

/** The metadata `@Plugin()` of `@nestjs/apollo` sets; oncely does not load that package. */
const APOLLO_PLUGIN_METADATA = 'graphql:plugin';

/** What the plugin reads of Apollo Server's request context. */
export interface OncelyGraphQLRequestContext {
  /** The operation's context value, which its resolvers receive: its capture is keyed by it. */
  readonly contextValue: unknown;
}

/** What the plugin reads and rewrites of Apollo Server's response. */
export interface OncelyGraphQLResponseContext {
  /** Apollo Server's response about to be sent. */
  readonly response: {
    /** The response body; replays' fields are written into its single result. */
    readonly body: GraphQLResponseBody;
  };
}

/** The request listener the plugin answers with. */
export interface OncelyGraphQLRequestListener {
  /**
   * Before the response leaves: stores the results idempotent fields executed, and writes the
   * kept results of replayed fields into it.
   */
  willSendResponse(requestContext: OncelyGraphQLResponseContext): Promise<void>;
}

/**
 * The Apollo Server plugin that makes an idempotent GraphQL field replay what its first client
 * received: it keeps the field's executed result (field resolvers' values and errors included)
 * before the first response is sent, and writes it into the response of every replay.
 * `@IdempotentKey` resolvers are refused (`ONCELY_RESULT_CAPTURE_MISSING`) on a server without it.
 *
 * `OncelyModule` provides it, and Nest's Apollo driver picks it up as it does `@Plugin()`
 * providers. List it yourself when `GraphQLModule.forRoot({ include })` leaves `OncelyModule`
 * out, or when you build Apollo Server yourself:
 *
 * ```ts
 * GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, plugins: [new OncelyGraphQLPlugin()] })
 * ```
 *
 * Registered twice, it acts once.
 */
@SetMetadata(APOLLO_PLUGIN_METADATA, true)
export class OncelyGraphQLPlugin {
  /** Starts keeping the operation's results; `undefined` when another registration already does. */
  async requestDidStart(
    requestContext: OncelyGraphQLRequestContext,
  ): Promise<OncelyGraphQLRequestListener | undefined> {
    const capture = startExecutedResultCapture(requestContext.contextValue);
    if (!capture) return undefined;
    return { willSendResponse: ({ response }) => capture.settle(response.body) };
  }
}
