/**
 * `@oncely/nestjs`: {@link OncelyModule}, the {@link IdempotentKey | @IdempotentKey} and
 * {@link SingleFlight | @SingleFlight} route decorators,
 * {@link IdempotencyManager | @IdempotencyManager()} for transactional routes, the
 * {@link OncelyExceptionFilter} for apps with a catch-all filter of their own, and the
 * {@link OncelyGraphQLPlugin} for GraphQL replays. Works on Express and Fastify.
 *
 * @packageDocumentation
 * @module @oncely/nestjs
 */

// The module and its options.
export { OncelyModule } from './oncely.module.js';
export { ONCELY_MODULE_OPTIONS } from './oncely.module-definition.js';
export type {
  OncelyDeclaredOptions,
  OncelyModuleAsyncOptions,
  OncelyModuleFactoryOptions,
  OncelyModuleOptions,
  OncelyRmqOptions,
  OncelyValidationOptions,
} from './oncely-module-options.interface.js';

// The app's claims without starting it, for `oncely registry` (@oncely/cli).
export {
  readOncelyClaims,
  type NestRootModule,
  type OncelyClaims,
} from './registry/oncely-claims.reader.js';
export { OncelyClaimsUnreadableError } from './registry/oncely-claims-unreadable.error.js';

// Decorators.
export { IdempotentKey } from './decorators/idempotent-key.decorator.js';
export { SingleFlight } from './decorators/single-flight.decorator.js';
export type { NestRouteOptions } from './decorators/nest-route-options.js';
export { IdempotencyManager } from './decorators/idempotency-manager.decorator.js';
export { KeyIgnore } from '@oncely/core';

// HTTP responses oncely writes, for apps with their own catch-all exception filter.
export { OncelyExceptionFilter } from './http/oncely-exception.filter.js';
export { OncelyResponseException } from './http/oncely-response.exception.js';

// Errors as message and GraphQL clients see them.
export {
  OncelyCallErrorCode,
  callErrorPayloadOf,
  type OncelyCallErrorPayload,
} from './call/call-error.js';
export { OncelyGraphQLError, OncelyGraphQLErrorCode } from './graphql/oncely-graphql.error.js';

// GraphQL replays: the Apollo Server plugin keeping what the first client of a field received.
export {
  OncelyGraphQLPlugin,
  type OncelyGraphQLRequestContext,
  type OncelyGraphQLRequestListener,
  type OncelyGraphQLResponseContext,
} from './graphql/oncely-graphql.plugin.js';
export type { FormattedError, GraphQLResponseBody } from './graphql/executed-result.capture.js';
