import type {
  FlightCoordinator,
  IdempotencyRecordStore,
  IdempotentRouteOptions,
  OncelyEventListener,
  ProtectionDefaults,
  SecurityOptions,
  SingleFlightRouteOptions,
} from '@oncely/core';
import type { Request } from 'express';

export interface OncelyExpressOptions extends SecurityOptions {
  /** Who owns the key space: one per service or domain. */
  readonly namespace: string;
  /**
   * SingleFlight coordinator, e.g. `new RedisFlightCoordinator(redis)` from `@oncely/redis`.
   * Default: the in-memory coordinator (one process only), closed by `close()`.
   */
  readonly coordinator?: FlightCoordinator;
  /**
   * Durable idempotency records, e.g. `new TypeOrmIdempotencyRecordStore(dataSource)` from
   * `@oncely/typeorm` (supports `transactional`). Default: the in-memory store.
   */
  readonly store?: IdempotencyRecordStore;
  /** Lets `NODE_ENV=production` start on the in-memory defaults; say so only for one-node apps. */
  readonly allowInMemory?: boolean;
  /**
   * Defaults every route may override: TTLs, wait, fingerprint bits, header name, `maxDuration`
   * (how long a handler may hold its key, default 300 000 ms), …
   */
  readonly defaults?: Partial<Omit<ProtectionDefaults, 'namespace'>>;
  /** Receive every decision; a throwing listener is ignored. */
  readonly events?: OncelyEventListener | readonly OncelyEventListener[];
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
interface MiddlewareOptions {
  /**
   * Names the route in start-up errors, registry conflicts and events' context, e.g.
   * `'POST /orders'`. Default: the mechanism, the operation and a sequence number.
   */
  readonly name?: string;
  readonly validate?: BodyValidator;
}

/** `oncely.idempotent(options)`: durable idempotency for one route. */
export type IdempotentMiddlewareOptions = IdempotentRouteOptions & MiddlewareOptions;

/** `oncely.singleFlight(options)`: coalesce concurrent duplicates of one route. */
export type SingleFlightMiddlewareOptions = SingleFlightRouteOptions & MiddlewareOptions;
