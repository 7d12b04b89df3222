import {
  RouteOptionsError,
  createOncelyEngine,
  type IdempotencyRecordStore,
  type OncelyEngineOptions,
  type OncelyEngine,
  type OperationRegistry,
  type ProtectionDefaults,
  type RegistryClaim,
} from '@oncely/core';
import {
  closeGivenAdaptersOnError,
  ENGINE_OPTION_NAMES,
  refuseUnknownOptions,
  requireFunction,
  type ProtectedRoute,
} from '@oncely/core/adapter';
import type { Request, RequestHandler } from 'express';
import type {
  BodyValidator,
  IdempotentMiddlewareOptions,
  OncelyExpressOptions,
  SingleFlightMiddlewareOptions,
} from './oncely-express-options.interface.js';
import { protectedRouteMiddleware } from './protected-route.middleware.js';

const OWNER = 'createOncely()';

/** The engine's options and Express's own. */
const EXPRESS_OPTION_NAMES: ReadonlySet<string> = new Set([
  ...ENGINE_OPTION_NAMES,
  ...Object.keys({
    resolveUser: true,
  } satisfies Record<Exclude<keyof OncelyExpressOptions, keyof OncelyEngineOptions>, true>),
]);

/**
 * oncely for one Express app: core's engine, built once from `createOncely()`'s options, and the
 * middleware factories. Every middleware is validated and registered when it is created, so a
 * bad option or two routes claiming one operation fail at start-up, naming the route.
 */
export class Oncely {
  readonly #engine: OncelyEngine;
  readonly #resolveUser: (req: Request) => unknown;
  #routes = 0;

  constructor(options: OncelyExpressOptions) {
    const { resolveUser, ...engineOptions } = options ?? ({} as OncelyExpressOptions);
    // Checked first: a refused option must not leave an engine behind, open (nor the adapters
    // handed over, which the engine would have closed).
    closeGivenAdaptersOnError(options, () => {
      refuseUnknownOptions(OWNER, options ?? {}, EXPRESS_OPTION_NAMES);
      requireFunction(OWNER, 'resolveUser', resolveUser, '(req) => principal');
    });
    this.#engine = createOncelyEngine({ ...engineOptions, owner: OWNER });
    this.#resolveUser = resolveUser ?? ((req) => (req as { user?: unknown }).user);
  }

  /** Every protected route's claim on its `namespace:operation:version`. */
  get registry(): OperationRegistry {
    return this.#engine.registry;
  }

  /** The service owning this app's claims: the `service` option, or its default. */
  get service(): string {
    return this.#engine.service;
  }

  /** Other names the service accepts as its own: the `serviceAliases` option, checked. */
  get serviceAliases(): readonly string[] {
    return this.#engine.serviceAliases;
  }

  /**
   * Every claim of the middleware created so far, as `oncely registry export` writes them: the
   * registry lists an Express app by loading the module that creates its middleware.
   */
  claims(): RegistryClaim[] {
    return this.#engine.claims();
  }

  /** The route defaults, namespace included. */
  get defaults(): ProtectionDefaults {
    return this.#engine.defaults;
  }

  /** The record store as oncely uses it (with quota and encryption, if configured). */
  get store(): IdempotencyRecordStore {
    return this.#engine.store;
  }

  /**
   * Durable idempotency for a route: a retry replays the stored response, a retry in flight gets
   * 409, the same key with another payload 422. Mount it on the route, before the handler.
   */
  idempotent(options: IdempotentMiddlewareOptions): RequestHandler {
    const { name, validate, ...route } = this.#middlewareOptions('idempotent', options);
    return this.#middleware(this.#engine.defineRoute(name, { idempotent: route }), validate);
  }

  /**
   * Coalesces concurrent duplicates of a route into one execution whose response every caller
   * gets, cached for `resultTtl`. Mount it on the route, before the handler (after `idempotent`
   * when both are used).
   */
  singleFlight(options: SingleFlightMiddlewareOptions): RequestHandler {
    const { name, validate, ...route } = this.#middlewareOptions('singleFlight', options);
    return this.#middleware(this.#engine.defineRoute(name, { singleFlight: route }), validate);
  }

  /**
   * Runs the store's start-up check and starts its background work (`OncelyEngine.start`), logs
   * one line per adapter saying what it works on (a warning instead for a backend that does not
   * answer within `bootTimeout`: the app boots anyway), then registers the claims of the
   * middleware created so far where the records go, renewed until `close()`
   * (`OncelyEngine.registerClaims`). Lines and warnings go to the `logger` option (`console` by
   * default). Await it before `app.listen()`, once the routes are mounted: a record table that is
   * missing or not migrated (`RecordTableNotMigratedError`), or another service's live claim on
   * one of the operations (`onForeignClaim: 'fail'`, `ForeignClaimError`), rejects it, both the
   * same way, instead of failing requests. A failed start closes what oncely owns. Middleware
   * created later joins the registry on the next renewal, where a conflict can only be warned
   * about.
   */
  async start(): Promise<void> {
    await this.#engine.start();
    await this.#engine.registerClaims();
  }

  /**
   * Withdraws this instance's claims, then closes the coordinator and store: the in-memory defaults and the adapters passed in (which
   * leave open the clients you gave them).
   */
  close(): Promise<void> {
    return this.#engine.close();
  }

  #middleware(route: ProtectedRoute, validate: BodyValidator | undefined): RequestHandler {
    return protectedRouteMiddleware({
      route,
      executor: this.#engine.executor,
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
