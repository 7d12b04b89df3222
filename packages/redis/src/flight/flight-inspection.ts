import type { FlightInspection } from '@oncely/core';

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
