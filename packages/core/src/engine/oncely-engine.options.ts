import type { OncelyEventListener } from '../events/oncely-event.js';
import type { FlightCoordinator } from '../flight/flight-coordinator.port.js';
import type { IdempotencyRecordStore } from '../record/idempotency-record-store.port.js';
import type { ProtectionDefaults } from '../call/route-options.js';
import type { CallTracer } from '../tracing/call-tracer.port.js';
import type { OnForeignClaim } from '../registry/claim-heartbeat.js';
import type { ClaimOptions } from './claim-setup.js';
import type { OncelyLogger } from './oncely-logger.js';
import type { SecurityOptions } from './secure-engines.js';

/** What every integration (the Nest module, `createOncely()`) configures oncely's engines with. */
export interface OncelyEngineOptions extends SecurityOptions {
  /** Who owns the key space: one per service or domain, e.g. `"shop"`. */
  readonly namespace: string;
  /**
   * The service owning this app's claims, e.g. `"shop-api"`: letters, digits, `. _ ~ -`, after an
   * optional npm scope (`@acme/`). The registry lists it as every claim's `owner`. Default: the
   * `name` of the nearest `package.json` above the working directory, else the namespace.
   */
  readonly service?: string;
  /**
   * Other names this service accepts as its own while it is renamed, e.g. `["shop"]` beside
   * `service: "shop-api"`: their live claims do not fail its boot, and their records, SingleFlight
   * leases and cached results answer it as its own, while what it writes still carries `service`.
   * Named aliases rather than former names because a rename lists the new name first (old
   * replicas accepting it), then the old one: see docs/shared-claims.md for the steps. Each is a
   * service name, listed once, other than `service`. Default: none.
   */
  readonly serviceAliases?: readonly string[];
  /**
   * The SingleFlight coordinator, e.g. `new RedisFlightCoordinator(redis)` from `@oncely/redis`.
   * Handed over: the engine closes it on `close()` (which leaves a client you passed it open).
   * Default: an in-memory coordinator for this process only.
   */
  readonly coordinator?: FlightCoordinator;
  /**
   * The durable idempotency records, e.g. `new TypeOrmIdempotencyRecordStore(dataSource)` from
   * `@oncely/typeorm` (supports `transactional`) or `new RedisIdempotencyRecordStore(redis)`.
   * Handed over like the coordinator. Default: an in-memory store for this process only.
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
   * One span per protected call (`oncely <operation>`, with its decision and a hash of its key).
   * Default: OpenTelemetry's, when `@opentelemetry/api` is installed (it records nothing until
   * the app registers an SDK); `false` turns tracing off; a `CallTracer` traces with that one,
   * e.g. `createOpenTelemetryTracer(otel, { tracerProvider })`.
   */
  readonly tracing?: false | CallTracer;
  /**
   * What the start-up does when another service holds a live claim on one of the app's operations
   * (same mechanism and `namespace:operation:version`, not both routes `shared: true`), found in
   * the registry where the records go. `'fail'` (default): the boot throws `ForeignClaimError`
   * naming both services and routes. `'warn'`: a warning is logged once and a `foreign_claim`
   * event emitted; the foreign-owner checks then refuse each other's records per call.
   */
  readonly onForeignClaim?: OnForeignClaim;
  /**
   * How the app's claims are registered where its records go (the store's registry for
   * idempotency claims, the coordinator's for SingleFlight claims), renewed on a heartbeat and
   * withdrawn on close: `{ ttl, renewEvery, registry }` (defaults 30 s, 10 s, where the records
   * go), or `false` to register none.
   */
  readonly claims?: ClaimOptions | false;
  /**
   * Where the start-up's lines go (one per adapter, saying what it works on, never a password)
   * and oncely's warnings (an unreachable backend, a foreign claim): `console` by default in
   * Express and `createOncelyEngine`, Nest's `Logger` in the Nest module; `false` silences both.
   */
  readonly logger?: OncelyLogger | false;
  /**
   * How long the start-up waits for a backend, in milliseconds (default 1000): for each adapter
   * to answer its reachability check, then for the first registration of the app's claims. A
   * backend silent past it is warned about once and the app boots anyway; its claims are
   * registered by a later renewal. The withdrawal of claims at shutdown waits as long at most.
   */
  readonly bootTimeout?: number;
  /**
   * Names the entry point in error messages, e.g. `OncelyModule` or `createOncely()`.
   * Default: `createOncelyEngine()`.
   */
  readonly owner?: string;
}

/**
 * Every option an app may give the engine (`owner` is the integrations' own): anything else is a
 * mistake, a misspelt name or an option of another entry point, that would run with a default
 * nobody chose. Typed against `OncelyEngineOptions`, so a new option cannot be left out here.
 */
export const ENGINE_OPTION_NAMES: ReadonlySet<string> = new Set(
  Object.keys({
    namespace: true,
    service: true,
    serviceAliases: true,
    coordinator: true,
    store: true,
    allowInMemory: true,
    defaults: true,
    events: true,
    tracing: true,
    onForeignClaim: true,
    claims: true,
    encryption: true,
    recordQuota: true,
    logger: true,
    bootTimeout: true,
  } satisfies Record<Exclude<keyof OncelyEngineOptions, 'owner'>, true>),
);
