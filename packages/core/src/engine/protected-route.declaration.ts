import type { IdempotentRouteOptions, SingleFlightRouteOptions } from '../call/route-options.js';

/** The mechanisms one route declares (a decorator's or a middleware's options). */
export interface ProtectedRouteDeclaration {
  /** Durable idempotency for the route, as `@IdempotentKey` or `idempotent()` declares it. */
  readonly idempotent?: IdempotentRouteOptions;
  /** SingleFlight for the route, as `@SingleFlight` or `singleFlight()` declares it. */
  readonly singleFlight?: SingleFlightRouteOptions;
}
