import type {
  IdempotentRouteOptions,
  ProtectedRouteDeclaration,
  SingleFlightRouteOptions,
} from '@oncely/core';
import type { ProtectedRoute } from '@oncely/core/adapter';
import { IDEMPOTENT_KEY_METADATA, SINGLE_FLIGHT_METADATA } from '../oncely.constants.js';

/**
 * Resolves declared options against the module defaults into a route and registers its claims
 * (the engine's `defineRoute`), so that every kind of handler is checked the same way.
 */
export type ProtectedRouteDefiner = (
  name: string,
  declared: ProtectedRouteDeclaration,
) => ProtectedRoute;

/** What the oncely decorators declared on `handler`; `undefined` when it carries none. */
export function declaredProtectionOf(handler: object): ProtectedRouteDeclaration | undefined {
  const idempotent = Reflect.getMetadata(IDEMPOTENT_KEY_METADATA, handler) as
    IdempotentRouteOptions | undefined;
  const singleFlight = Reflect.getMetadata(SINGLE_FLIGHT_METADATA, handler) as
    SingleFlightRouteOptions | undefined;
  if (!idempotent && !singleFlight) return undefined;
  return { ...(idempotent && { idempotent }), ...(singleFlight && { singleFlight }) };
}
