import type { IdempotentRouteOptions, SingleFlightRouteOptions } from '../call/route-options.js';

/** The mechanisms one route declares (a decorator's or a middleware's options). */
export interface ProtectedRouteDeclaration {
  readonly idempotent?: IdempotentRouteOptions;
  readonly singleFlight?: SingleFlightRouteOptions;
}
