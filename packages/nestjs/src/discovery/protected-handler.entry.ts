import type { Type } from '@nestjs/common';
import type { ProtectedRoute } from '@oncely/core/adapter';

/** Where a protected handler is called from, which decides how its calls are intercepted. */
export type ProtectedHandlerKind = 'http' | 'rpc' | 'graphql' | 'method';

/** What the interceptor needs to know about one decorated HTTP route, resolved at start-up. */
export interface HttpRouteEntry {
  readonly route: ProtectedRoute;
  /** The `@Body()` DTO class the interceptor validates and transforms, if the route has one. */
  readonly bodyType?: Type;
  /** The status Nest answers with on success (`@HttpCode()` or the method's default). */
  readonly statusCode: number;
  /**
   * Whether the keys wait for the route's own interceptors (multer's, or
   * `keyAfterInterceptors: true`): they are built next to the handler, from what it receives.
   */
  readonly keyAfterInterceptors: boolean;
}

/** Metadata `@MessagePattern`/`@EventPattern` leave on a handler (`@nestjs/microservices`). */
export const RPC_PATTERN_METADATA = 'microservices:pattern';

/** Metadata `@Mutation`/`@Query` leave on a resolver method (`@nestjs/graphql`). */
export const GRAPHQL_RESOLVER_METADATA = 'graphql:resolver_type';
