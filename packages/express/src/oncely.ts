import {
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  OperationRegistry,
  ProtectedCallExecutor,
  RouteOptionsError,
  TransactionalStoreRequiredError,
  createProtectionEngines,
  defineProtectedRoute,
  eventListenersOf,
  refuseInMemoryInProduction,
  resolveProtectionDefaults,
  isTransactionalRecordStore,
  secureEngines,
  type IdempotencyRecordStore,
  type ProtectionDefaults,
} from '@oncely/core';
import type { Request, RequestHandler } from 'express';
import type {
  BodyValidator,
  IdempotentMiddlewareOptions,
  OncelyExpressOptions,
  SingleFlightMiddlewareOptions,
} from './oncely-express-options.interface.js';
import { checkCoordinator, checkResolveUser, checkStore } from './oncely-options.js';
import { protectedRouteMiddleware } from './protected-route.middleware.js';

const OWNER = 'createOncely()';

interface Closable {
  close(): Promise<void>;
}

/**
 * oncely for one Express app: the engines and defaults resolved once from `createOncely()`, and
 * the middleware factories. Every middleware is validated and registered when it is created, so
 * a bad option or two routes claiming one operation fail at start-up, naming the route.
 */
export class Oncely {
  /** Every protected route's claim on its `namespace:operation:version`. */
  readonly registry = new OperationRegistry();
  readonly defaults: ProtectionDefaults;
  readonly store: IdempotencyRecordStore;
  readonly #executor: ProtectedCallExecutor;
  readonly #resolveUser: (req: Request) => unknown;
  readonly #owned: Closable[] = [];
  #routes = 0;

  constructor(options: OncelyExpressOptions) {
    this.defaults = resolveProtectionDefaults(OWNER, options);
    refuseInMemoryInProduction(OWNER, options, {
      coordinator: 'e.g. new RedisFlightCoordinator(redis) from @oncely/redis',
      store: 'e.g. new TypeOrmIdempotencyRecordStore(dataSource) from @oncely/typeorm',
    });
    checkResolveUser(options.resolveUser);
    const events = eventListenersOf(OWNER, options.events);
    const given = checkCoordinator(options.coordinator);
    const plainCoordinator = given ?? new InMemoryFlightCoordinator();
    if (!given) this.#owned.push(plainCoordinator);
    const { coordinator, store } = secureEngines(
      OWNER,
      {
        coordinator: plainCoordinator,
        store: checkStore(options.store) ?? new InMemoryIdempotencyRecordStore(),
      },
      options,
    );
    this.store = store;
    this.#resolveUser = options.resolveUser ?? ((req) => (req as { user?: unknown }).user);
    this.#executor = new ProtectedCallExecutor(
      createProtectionEngines({
        coordinator,
        store: this.store,
        events,
        maxResponseBytes: this.defaults.maxResponseBytes,
      }),
    );
  }

  /**
   * Durable idempotency for a route: a retry replays the stored response, a retry in flight gets
   * 409, the same key with another payload 422. Mount it on the route, before the handler.
   */
  idempotent(options: IdempotentMiddlewareOptions): RequestHandler {
    const { name, validate, ...route } = this.#middlewareOptions('idempotent', options);
    const protectedRoute = defineProtectedRoute(name, { idempotent: route }, this.defaults);
    if (protectedRoute.idempotent?.transactional && !isTransactionalRecordStore(this.store)) {
      throw new TransactionalStoreRequiredError(name);
    }
    return this.#middleware(protectedRoute, validate);
  }

  /**
   * Coalesces concurrent duplicates of a route into one execution whose response every caller
   * gets, cached for `resultTtl`. Mount it on the route, before the handler (after `idempotent`
   * when both are used).
   */
  singleFlight(options: SingleFlightMiddlewareOptions): RequestHandler {
    const { name, validate, ...route } = this.#middlewareOptions('singleFlight', options);
    const protectedRoute = defineProtectedRoute(name, { singleFlight: route }, this.defaults);
    return this.#middleware(protectedRoute, validate);
  }

  /** Closes what `createOncely()` created (never a coordinator or store passed in). */
  async close(): Promise<void> {
    await Promise.allSettled(this.#owned.map((resource) => resource.close()));
  }

  #middleware(
    route: ReturnType<typeof defineProtectedRoute>,
    validate: BodyValidator | undefined,
  ): RequestHandler {
    this.registry.register(route);
    return protectedRouteMiddleware({
      route,
      executor: this.#executor,
      resolveUser: this.#resolveUser,
      ...(validate && { validate }),
    });
  }

  #middlewareOptions<T extends { name?: string; validate?: BodyValidator; operation?: unknown }>(
    mechanism: 'idempotent' | 'singleFlight',
    options: T,
  ): Omit<T, 'name'> & { name: string } {
    if (typeof options !== 'object' || options === null) {
      throw new RouteOptionsError(
        `${mechanism}()`,
        'options',
        'pass an object with at least an operation',
      );
    }
    this.#routes += 1;
    const name = options.name ?? `${mechanism}(${String(options.operation)}) #${this.#routes}`;
    if (typeof name !== 'string' || name.trim() === '') {
      throw new RouteOptionsError(`${mechanism}()`, 'name', 'must be a non-empty string');
    }
    if (options.validate !== undefined && typeof options.validate !== 'function') {
      throw new RouteOptionsError(name, 'validate', 'must be a function (body, req) => body');
    }
    return { ...options, name };
  }
}

/** Creates oncely for an Express app; in-memory engines unless a coordinator and store are given. */
export function createOncely(options: OncelyExpressOptions): Oncely {
  return new Oncely(options);
}
