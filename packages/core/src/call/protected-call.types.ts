import type { OncelyEventListener } from '../events/oncely-event.js';
import type { Clock } from '../time/clock.js';
import type { FlightResult, FlightRunOptions, FlightWork } from '../flight/flight.types.js';
import type { IdempotencyRecordStore } from '../record/idempotency-record-store.port.js';
import type { CallKeys } from './call-keys.js';
import type { HttpResponse } from '../http/http-response.js';
import type { ProtectedRoute } from './protected-route.js';
import type { CallEvents } from './call-events.js';
import type { LocalCalls } from './local-calls.js';
import type { CallTracer } from '../tracing/call-tracer.port.js';

/** What the executor needs of the SingleFlight engine (`SingleFlight` satisfies it). */
export interface FlightRunner {
  /** Runs `work` once for every concurrent caller of `key`, as `SingleFlight.run` does. */
  run<T>(key: string, work: FlightWork<T>, options?: FlightRunOptions): Promise<FlightResult<T>>;
  /**
   * Optional: the result held for `key` in this process, answered at once, as
   * `SingleFlight.peek` does; the executor asks it before it joins a call of this process.
   */
  peek?<T>(key: string, options?: FlightRunOptions): FlightResult<T> | undefined;
  /** Whether this process's flight on `key` still holds its lease (an operator may free it). */
  holdsLease(key: string): Promise<boolean>;
}

/**
 * What `ProtectedCallExecutor` runs calls on; `createProtectionEngines` builds it from a
 * coordinator and a store.
 */
export interface ProtectedCallEngines {
  /** Engine of `@SingleFlight` routes; its own listeners report single-flight events. */
  readonly flight: FlightRunner;
  /**
   * Engine of the idempotency guard in front of the record store (in-flight duplicates refused
   * at the lease, replays from the result cache). Same coordinator as `flight` is fine.
   */
  readonly guard: FlightRunner;
  /** `transactional` routes need a `TransactionalIdempotencyRecordStore` (e.g. TypeORM). */
  readonly store: IdempotencyRecordStore;
  /**
   * Receive the executor's idempotency events; single-flight events come from `flight`'s own
   * listeners.
   */
  readonly events?: readonly OncelyEventListener[];
  /**
   * Traces every call, one span each; or a function asked at each call, for a tracer that is
   * loaded after the executor is built (the engine's OpenTelemetry one). None by default.
   */
  readonly tracer?: CallTracer | (() => CallTracer | undefined);
  /** Time source for record leases and retention; the system clock by default. */
  readonly clock?: Clock;
  /**
   * The service stamped on every record it claims (the app's `service`); a record of another
   * service under a key is then refused (`ForeignOwnerError`) unless the route is `shared`.
   * Without it, no owners are stored or compared.
   */
  readonly service?: string;
  /**
   * Other services whose records, leases and cached results count as this one's own (the app's
   * `serviceAliases`, while it is renamed); what it writes still carries `service`. Left out
   * when there are none, so the owner checks compare `service` alone.
   */
  readonly serviceAliases?: ReadonlySet<string>;
}

/** What a handler gets while oncely runs it. */
export interface HandlerContext {
  /**
   * Aborts when the lease (flight or record) is lost or the route's `maxDuration` is over: stop,
   * nothing will be confirmed. Cooperative: a handler that ignores it keeps running unobserved.
   */
  readonly signal: AbortSignal;
  /** The transaction of a `transactional` route (e.g. a TypeORM `EntityManager`). */
  readonly transaction?: unknown;
}

/** One HTTP request to a protected route, as a framework integration hands it to the executor. */
export interface ProtectedCall {
  /** The route as defined once at start-up. */
  readonly route: ProtectedRoute;
  /** The request's business keys and client key, from `resolveCallKeys`. */
  readonly keys: CallKeys;
  /** Runs the route's handler and reports its response; throwing is a transient failure. */
  readonly handler: (context: HandlerContext) => Promise<HttpResponse>;
  /**
   * The request only reads what a `GET` keeps: set it for an HTTP `HEAD`. It is answered from
   * the kept response (status and headers; the platform sends no body) or from a `GET` running
   * in this process on a SingleFlight route; otherwise its handler runs unprotected and nothing
   * of it is kept, so a `GET` never replays a `HEAD`'s empty body. It never claims a record or
   * leads a flight.
   */
  readonly readOnly?: boolean;
}

/** What the executor answers a protected HTTP call with. */
export interface ProtectedCallResult {
  /**
   * The leader's own response as its handler produced it, or, for a replay, the kept status,
   * body and replay headers plus `idempotent-replayed: true`.
   */
  readonly response: HttpResponse;
  /** Whether `response` is a kept one (a replay or a joined flight) rather than this call's own. */
  readonly replayed: boolean;
}

/** What every part of one executor's calls shares. */
export interface CallEnvironment {
  readonly engines: ProtectedCallEngines;
  readonly clock: Clock;
  readonly events: CallEvents;
  /** This process's calls per key, for local sharing and refusals. */
  readonly local: LocalCalls;
}
