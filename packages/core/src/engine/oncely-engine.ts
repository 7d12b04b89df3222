import { ProtectedCallExecutor } from '../call/protected-call.executor.js';
import type { OperationRegistry } from '../call/operation-registry.js';
import type { ProtectedRoute } from '../call/protected-route.js';
import type { ProtectionDefaults } from '../call/route-options.js';
import { TransactionalStoreRequiredError } from '../call/route-setup.errors.js';
import type { FlightCoordinator } from '../flight/flight-coordinator.port.js';
import { InMemoryFlightCoordinator } from '../flight/in-memory-flight-coordinator.js';
import type { IdempotencyRecordStore } from '../record/idempotency-record-store.port.js';
import { InMemoryIdempotencyRecordStore } from '../record/in-memory-idempotency-record.store.js';
import { isTransactionalRecordStore } from '../record/transactional-idempotency-record-store.port.js';
import { ClaimHeartbeat } from '../registry/claim-heartbeat.js';
import type { RegistryClaim } from '../registry/registry-claim.js';
import { checkBackends } from './backend-check.js';
import { claimSettingsOf, claimTargetsOf, type ClaimSettings } from './claim-setup.js';
import { CallTracing } from './call-tracing.js';
import { DeclaredRoutes } from './declared-routes.js';
import { closeGivenAdaptersOnError, isClosable, type Closable } from './given-adapters.js';
import type { OncelyEventListener } from '../events/oncely-event.js';
import { ENGINE_OPTION_NAMES, type OncelyEngineOptions } from './oncely-engine.options.js';
import { loggerOption, type OncelyLogger } from './oncely-logger.js';
import {
  coordinatorOption,
  positiveIntegerOption,
  refuseUnknownOptions,
  storeOption,
} from './option-checks.js';
import { createProtectionEngines } from './protection-engines.js';
import type { ProtectedRouteDeclaration } from './protected-route.declaration.js';
import { eventListenersOf, refuseInMemoryInProduction } from './protection-setup.js';
import { secureEngines } from './secure-engines.js';

export type { ProtectedRouteDeclaration } from './protected-route.declaration.js';

/**
 * oncely's engines for one app, built once at start-up from validated options: what a framework
 * integration runs its protected routes on. It owns the coordinator and store (the in-memory
 * defaults it created and the adapters handed to it) and closes them in `close()`.
 */
export interface OncelyEngine {
  /** The entry point named in error messages. */
  readonly owner: string;
  /** The service owning this app's claims: the `service` option, or its default. */
  readonly service: string;
  /** Other names the service accepts as its own: the `serviceAliases` option, checked. */
  readonly serviceAliases: readonly string[];
  /** The route defaults, namespace included. */
  readonly defaults: ProtectionDefaults;
  /** Runs protected calls on the coordinator and store below. */
  readonly executor: ProtectedCallExecutor;
  /** Every defined route's claim on its `namespace:operation:version`. */
  readonly registry: OperationRegistry;
  /** The coordinator as the executor uses it (with encryption, if configured). */
  readonly coordinator: FlightCoordinator;
  /** The store as the executor uses it (with quota and encryption, if configured). */
  readonly store: IdempotencyRecordStore;
  /** Whether `transactional: true` routes can run on the store. */
  readonly supportsTransactions: boolean;
  /**
   * Resolves a route's options against the defaults and registers its claims, so a bad option,
   * a `transactional` route on a store without transactions, or two routes claiming one
   * operation fail at start-up, naming the route.
   */
  defineRoute(name: string, declared: ProtectedRouteDeclaration): ProtectedRoute;
  /** Every defined route's claims, as `oncely registry export` writes them. */
  claims(): RegistryClaim[];
  /**
   * Waits for the tracer (OpenTelemetry's API, loaded asynchronously when installed; a broken
   * install is an `OpenTelemetryLoadError`), then runs the store's start-up hook
   * (`IdempotencyRecordStore.start`) once: its readiness check (the TypeORM store refuses a
   * record table that is missing or not migrated) and its background work (a purge schedule).
   * Await it before serving; the Nest module does. When it fails the engine closes what it owns,
   * so a refused boot leaves no connection open behind it, and the error is rethrown. Then it
   * logs one line per adapter saying what it works on, or warns once about one whose backend
   * does not answer within `bootTimeout` (the app still boots). Calling it again returns the
   * same promise.
   */
  start(): Promise<void>;
  /**
   * Registers every defined route's claims where the records go (see the `claims` option) and
   * renews them on an unref'd timer until `close()`. Call it once every route is defined (the
   * Nest module does at bootstrap, Express's `start()` does). A live claim of another service on
   * one of the operations rejects with `ForeignClaimError` under `onForeignClaim: 'fail'`, after
   * closing what the engine owns; under `'warn'` it goes to `warn` and to a `foreign_claim`
   * event, warnings going to the `logger`. It waits `bootTimeout` at most for a registry, and not
   * at all for one on a backend `start()` found unreachable: those are registered by a later
   * renewal, where a conflict can only be warned about. Calling it again returns the same promise.
   */
  registerClaims(): Promise<void>;
  /**
   * Stops renewing this instance's claims and withdraws them (other replicas' stay); `close()`
   * does it too. Call it while the clients the registries use are still open: the Nest module
   * does before the app's own shutdown hooks close connections.
   */
  withdrawClaims(): Promise<void>;
  /**
   * Withdraws this instance's claims (other replicas' stay), then closes the coordinator and
   * store (each closes only the clients it created). Idempotent.
   */
  close(): Promise<void>;
}

/**
 * Validates the options, builds the coordinator and store (in-memory when left out, refused in
 * production unless `allowInMemory`), applies the security options and builds the executor.
 * Throws `OncelyConfigurationError` naming the first bad option, after closing the coordinator
 * and store handed to it (so one built from a URL leaves no connection open behind the error).
 */
export function createOncelyEngine(options: OncelyEngineOptions): OncelyEngine {
  return closeGivenAdaptersOnError(options, () => buildEngine(options));
}

function buildEngine(options: OncelyEngineOptions): OncelyEngine {
  // Before any other check: a misspelt option would otherwise surface as a missing one.
  const { owner: entryPoint = 'createOncelyEngine()', ...appOptions } = (options ??
    {}) as Partial<OncelyEngineOptions>;
  refuseUnknownOptions(entryPoint, appOptions, ENGINE_OPTION_NAMES);
  const routes = DeclaredRoutes.create(options);
  const { owner } = routes;
  const claims = claimSettingsOf(owner, options.claims, options.onForeignClaim);
  const given = {
    coordinator: coordinatorOption(owner, options.coordinator),
    store: storeOption(owner, options.store),
  };
  refuseInMemoryInProduction(owner, options);
  const events = eventListenersOf(owner, options.events);
  const logger = loggerOption(owner, options.logger, console);
  const bootTimeoutMs = positiveIntegerOption(
    owner,
    'bootTimeout',
    options.bootTimeout,
    DEFAULT_BOOT_TIMEOUT_MS,
  );
  const tracing = new CallTracing(owner, options.tracing);
  const plain = {
    coordinator: given.coordinator ?? new InMemoryFlightCoordinator(),
    store: given.store ?? new InMemoryIdempotencyRecordStore(),
  };
  const { coordinator, store } = secureEngines(owner, plain, options);
  // Built once: the per-call owner checks look names up in it, and only when there are any.
  const aliases = routes.serviceAliases.length > 0 ? new Set(routes.serviceAliases) : undefined;
  const executor = new ProtectedCallExecutor(
    createProtectionEngines({
      coordinator,
      store,
      events,
      tracer: tracing.current,
      maxResponseBytes: routes.defaults.maxResponseBytes,
      service: routes.service,
      ...(aliases && { serviceAliases: aliases }),
    }),
  );
  return new Engine(routes, executor, coordinator, store, {
    givenStore: plain.store,
    plain,
    claims,
    ...(aliases && { serviceAliases: aliases }),
    events,
    tracing,
    logger,
    bootTimeoutMs,
    owned: closablesOf(plain),
  });
}

/** Default `bootTimeout`: how long the start-up waits for a backend, 1 s. */
export const DEFAULT_BOOT_TIMEOUT_MS = 1_000;

/** What the engine closes: the coordinator and the store, if it has a `close()`. */
function closablesOf(engines: { coordinator: object; store: object }): Closable[] {
  return [engines.coordinator, engines.store].filter(isClosable);
}

class Engine implements OncelyEngine {
  readonly supportsTransactions: boolean;
  #starting: Promise<void> | undefined;
  #registering: Promise<void> | undefined;
  #heartbeat: ClaimHeartbeat | undefined;
  #closing: Promise<void> | undefined;
  /** The adapters whose backend did not answer at start-up. */
  #unreachable: ReadonlySet<object> = new Set();

  constructor(
    private readonly routes: DeclaredRoutes,
    readonly executor: ProtectedCallExecutor,
    readonly coordinator: FlightCoordinator,
    readonly store: IdempotencyRecordStore,
    private readonly parts: {
      /** The store as given, which the security wrappers forward to: the one to start. */
      readonly givenStore: IdempotencyRecordStore;
      /** The coordinator and store as given: those offering a claim registry. */
      readonly plain: { readonly coordinator: object; readonly store: object };
      readonly claims: ClaimSettings | undefined;
      readonly serviceAliases?: ReadonlySet<string>;
      readonly events: readonly OncelyEventListener[];
      readonly tracing: CallTracing;
      readonly logger: OncelyLogger;
      readonly bootTimeoutMs: number;
      readonly owned: readonly Closable[];
    },
  ) {
    this.supportsTransactions = isTransactionalRecordStore(store);
  }

  get owner(): string {
    return this.routes.owner;
  }

  get service(): string {
    return this.routes.service;
  }

  get serviceAliases(): readonly string[] {
    return this.routes.serviceAliases;
  }

  get defaults(): ProtectionDefaults {
    return this.routes.defaults;
  }

  get registry(): OperationRegistry {
    return this.routes.registry;
  }

  defineRoute(name: string, declared: ProtectedRouteDeclaration): ProtectedRoute {
    const route = this.routes.resolve(name, declared);
    if (route.idempotent?.transactional && !this.supportsTransactions) {
      throw new TransactionalStoreRequiredError(name);
    }
    this.routes.register(route);
    return route;
  }

  claims(): RegistryClaim[] {
    return this.routes.claims();
  }

  start(): Promise<void> {
    this.#starting ??= this.#start();
    return this.#starting;
  }

  async #start(): Promise<void> {
    const { tracing, givenStore, plain, logger, bootTimeoutMs } = this.parts;
    try {
      await tracing.ready();
      await givenStore.start?.();
    } catch (error) {
      await this.close();
      throw error;
    }
    this.#unreachable = await checkBackends(
      [
        { role: 'flight coordinator', adapter: plain.coordinator },
        { role: 'record store', adapter: plain.store },
      ],
      logger,
      bootTimeoutMs,
    );
  }

  registerClaims(): Promise<void> {
    this.#registering ??= this.#registerClaims();
    return this.#registering;
  }

  async #registerClaims(): Promise<void> {
    const { claims, plain, events, serviceAliases, logger, bootTimeoutMs } = this.parts;
    if (claims === undefined || this.#closing) return;
    const heartbeat = new ClaimHeartbeat(claimTargetsOf(claims, plain, this.#unreachable), {
      ...claims,
      ...(serviceAliases && { serviceAliases }),
      events,
      warn: (message) => logger.warn(message),
      bootTimeoutMs,
    });
    this.#heartbeat = heartbeat;
    try {
      await heartbeat.start(() => this.claims());
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  async withdrawClaims(): Promise<void> {
    await this.#heartbeat?.stop();
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      // Withdrawn first, while the clients the registries use are still open.
      await this.withdrawClaims();
      await Promise.allSettled(this.parts.owned.map((resource) => resource.close()));
    })();
    return this.#closing;
  }
}
