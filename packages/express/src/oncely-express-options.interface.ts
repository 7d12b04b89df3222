import type {
  IdempotentRouteOptions,
  OncelyEngineOptions,
  SingleFlightRouteOptions,
} from '@oncely/core';
import type { Request } from 'express';

/** `createOncely()`'s options: the engine's (namespace, coordinator, store, …) and Express's own. */
export interface OncelyExpressOptions extends Omit<OncelyEngineOptions, 'owner'> {
  /**
   * The principal keys read as `user.*`. Default: `req.user`, where authentication middleware
   * (passport and the like) leaves it; run that middleware before oncely's.
   */
  readonly resolveUser?: (req: Request) => unknown;
}

/**
 * Validates (and may transform) the parsed body before any key, lock or record exists. Return
 * the body the handler and the key should see (it replaces `req.body`); throw an
 * `InvalidBodyError` (from `@oncely/core`) to answer 400 problem+json. Any other error is passed
 * to `next(error)`.
 */
export type BodyValidator = (body: unknown, req: Request) => unknown;

/** What only a middleware needs on top of a route's options. */
export interface MiddlewareOptions {
  /**
   * Names the route in start-up errors, registry conflicts and events' context, e.g.
   * `'POST /orders'`. Default: the mechanism, the operation and a sequence number.
   */
  readonly name?: string;
  /** Checks the body before the key is built; without it the parsed body is used as is. */
  readonly validate?: BodyValidator;
}

/** `oncely.idempotent(options)`: durable idempotency for one route. */
export type IdempotentMiddlewareOptions = IdempotentRouteOptions & MiddlewareOptions;

/** `oncely.singleFlight(options)`: coalesce concurrent duplicates of one route. */
export type SingleFlightMiddlewareOptions = SingleFlightRouteOptions & MiddlewareOptions;
