import type { OncelyEventListener } from '../events/oncely-event.js';
import type { Clock } from '../time/clock.js';
import type { FlightCoordinator } from '../flight/flight-coordinator.port.js';
import {
  callerPeeksFirst,
  decodesHeldResultsOnce,
  letRejectingCallersJoin,
} from '../flight/executor-flight-marks.js';
import { SingleFlight } from '../flight/single-flight.js';
import type { IdempotencyRecordStore } from '../record/idempotency-record-store.port.js';
import type { ProtectedCallEngines } from '../call/protected-call.types.js';

/** What `createProtectionEngines` builds the engines from. */
export interface ProtectionEnginesOptions {
  /** Leases and result cache of both engines. */
  readonly coordinator: FlightCoordinator;
  /** Where idempotent routes keep their records. */
  readonly store: IdempotencyRecordStore;
  /** Receive every decision of both engines. */
  readonly events?: readonly OncelyEventListener[];
  /**
   * The routes' default `maxResponseBytes`: the coordinator caches serialised responses up to
   * half as large again plus 64 KiB, since bodies are base64-inflated in the cache.
   */
  readonly maxResponseBytes?: number;
  /** Traces every call (`ProtectedCallEngines.tracer`). */
  readonly tracer?: ProtectedCallEngines['tracer'];
  /** Time source for record leases and retention; the system clock by default. */
  readonly clock?: Clock;
  /** The service stamped on every record (`ProtectedCallEngines.service`). */
  readonly service?: string;
  /** Other services accepted as this one (`ProtectedCallEngines.serviceAliases`). */
  readonly serviceAliases?: ReadonlySet<string>;
}

/**
 * The engines of `ProtectedCallExecutor` on one coordinator: a SingleFlight for `@SingleFlight`
 * routes reporting its own events, and one for the idempotency guard whose only events of its own
 * are coordinator failures (reported as idempotency events; the executor reports the rest).
 */
export function createProtectionEngines(options: ProtectionEnginesOptions): ProtectedCallEngines {
  const events = options.events ?? [];
  const shared = {
    ...(options.maxResponseBytes !== undefined && {
      maxResultBytes: Math.ceil(options.maxResponseBytes * 1.5) + 64 * 1024,
    }),
    ...(options.service !== undefined && { service: options.service }),
    ...(options.serviceAliases !== undefined && {
      serviceAliases: [...options.serviceAliases],
    }),
  };
  return {
    flight: forExecutor(new SingleFlight(options.coordinator, { ...shared, events })),
    guard: forExecutor(
      new SingleFlight(options.coordinator, {
        ...shared,
        events: (event) => {
          if (event.outcome !== 'coordinator_down') return;
          for (const listener of events) listener({ ...event, mechanism: 'idempotency' });
        },
      }),
    ),
    store: options.store,
    events,
    ...(options.tracer && { tracer: options.tracer }),
    ...(options.clock && { clock: options.clock }),
    ...(options.service !== undefined && { service: options.service }),
    ...(options.serviceAliases !== undefined && { serviceAliases: options.serviceAliases }),
  };
}

/**
 * The executor refuses a duplicate of a running handler itself (`refuseRunningDuplicate`), and
 * peeks at the flight's held result before it joins a call of this process. It only reads the
 * kept responses a flight hands it, so a held one is decoded once for every hit on it.
 */
function forExecutor(flight: SingleFlight): SingleFlight {
  return decodesHeldResultsOnce(callerPeeksFirst(letRejectingCallersJoin(flight)));
}
