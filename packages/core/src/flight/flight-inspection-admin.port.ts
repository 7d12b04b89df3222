/** What a coordinator holds for one SingleFlight business key. */
export type FlightInspection =
  | {
      /** No lease, result or error: the next caller leads. */
      readonly kind: 'absent';
    }
  | {
      /** A caller leads the flight now. */
      readonly kind: 'leading';
      /** The lease holder's owner token. */
      readonly holder: string;
      /** The claiming service, when the lease carries one. */
      readonly service?: string;
      /** Fencing token of the lease, when the coordinator keeps one. */
      readonly fence?: number;
      /** Milliseconds until the lease runs out unless renewed. */
      readonly leaseRemainingMs: number;
    }
  | {
      /** A result is cached and served to followers. */
      readonly kind: 'cached';
      /** Milliseconds until the cached result expires. */
      readonly remainingMs: number;
      /** The service that stored it, when the result carries one. */
      readonly service?: string;
      /** Size of the stored result in bytes (the value itself is never shown). */
      readonly bytes: number;
    }
  | {
      /** A failure is cached and rethrown to followers. */
      readonly kind: 'failed';
      /** Milliseconds until the cached failure expires. */
      readonly remainingMs: number;
      /** The service that stored it, when the failure carries one. */
      readonly service?: string;
    };

/** One SingleFlight business key and what the coordinator holds for it. */
export interface FlightEntry {
  /** The business key. */
  readonly key: string;
  /** Its lease, cached result or cached error. */
  readonly inspection: FlightInspection;
}

/**
 * Operator access to what a coordinator holds per SingleFlight business key, next to
 * `FlightCoordinator`: inspect, list by operation, evict a cached outcome. Implemented by
 * `InMemoryFlightCoordinator` and `RedisFlightCoordinator` (`@oncely/redis`); use it through
 * `OncelyAdmin`.
 */
export interface FlightInspectionAdmin {
  /** The state of business key `key` (never the cached value itself). */
  inspectFlight(key: string): Promise<FlightInspection>;
  /** Business keys whose flight state starts with `operation` (`ns:op:ver`, or `ns:op` for all versions), scanning every master of a cluster, never KEYS. */
  listFlights(
    operation: string,
    options?: { readonly batchSize?: number },
  ): AsyncIterable<FlightEntry>;
  /** Deletes a cached result or error of `key` (not a running lease) and tells every process to drop its near-cached copy; false when there was none. */
  evictResult(key: string): Promise<boolean>;
}

/** Whether `coordinator` also offers the flight inspection methods. */
export function isFlightInspectionAdmin(coordinator: object): coordinator is FlightInspectionAdmin {
  const candidate = coordinator as Partial<FlightInspectionAdmin>;
  return (
    typeof candidate.inspectFlight === 'function' &&
    typeof candidate.listFlights === 'function' &&
    typeof candidate.evictResult === 'function'
  );
}
