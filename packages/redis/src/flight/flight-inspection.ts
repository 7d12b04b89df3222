/**
 * What a coordinator holds for one SingleFlight business key (never the cached value itself), as
 * `RedisFlightCoordinator.inspectFlight` reports it. `holder` is the lease's owner token;
 * `service` the service it names, if any.
 */
export type FlightInspection =
  | {
      /** Nothing is held: no lease, no cached outcome. */
      readonly kind: 'absent';
    }
  | {
      /** A caller holds the lease and runs the work. */
      readonly kind: 'leading';
      /** The owner token of the lease. */
      readonly holder: string;
      /** The service the owner token names, if it names one. */
      readonly service?: string;
      /** The lease's fencing token, where the coordinator keeps it (Redis does not). */
      readonly fence?: number;
      /** Time left on the lease, ms (0 for a lease without expiry). */
      readonly leaseRemainingMs: number;
    }
  | {
      /** A result is cached. */
      readonly kind: 'cached';
      /** Time until the cached result expires, ms. */
      readonly remainingMs: number;
      /** The service that stored it, where the coordinator keeps it (Redis does not). */
      readonly service?: string;
      /** Size of the stored payload, in bytes. */
      readonly bytes: number;
    }
  | {
      /** A deterministic error is cached. */
      readonly kind: 'failed';
      /** Time until the cached error expires, ms. */
      readonly remainingMs: number;
      /** The service that stored it, where the coordinator keeps it (Redis does not). */
      readonly service?: string;
    };

/** The service an owner token names (`service#random`), as the engine writes it. */
function serviceOf(token: string): string | undefined {
  const mark = token.indexOf('#');
  return mark > 0 ? token.slice(0, mark) : undefined;
}

/** The reply of `flight-inspect-1.lua` as a `FlightInspection`. */
export function toFlightInspection(reply: unknown): FlightInspection {
  const [tag, pttl, detail] = Array.isArray(reply) ? (reply as unknown[]) : [];
  // -1: no expiry (set by someone else); -2: gone since the tag was read.
  const remaining = Math.max(0, Number(pttl));
  switch (tag) {
    case undefined:
      return { kind: 'absent' };
    case 'L': {
      const holder = String(detail);
      const service = serviceOf(holder);
      return {
        kind: 'leading',
        holder,
        ...(service !== undefined && { service }),
        leaseRemainingMs: remaining,
      };
    }
    case 'R':
      return { kind: 'cached', remainingMs: remaining, bytes: Number(detail) };
    case 'E':
      return { kind: 'failed', remainingMs: remaining };
    default:
      throw new Error(`Unexpected reply from the oncely inspect script: ${JSON.stringify(reply)}`);
  }
}
