import { sharesDecodedResults } from './executor-flight-marks.js';
import type { HeldOutcome } from './flight-coordinator.port.js';
import type { FlightOutcomes } from './flight-outcomes.js';

/**
 * Held results as decoded, by the outcome object a coordinator holds (the same object for as long
 * as it keeps the outcome), so an entry goes when the coordinator lets its outcome go.
 */
const decoded = new WeakMap<HeldOutcome, unknown>();

/**
 * The value of a held result as `flight` hands it to a caller: a copy of its own, decoded from
 * the payload, or, for an engine whose callers never change what they are handed
 * (`decodesHeldResultsOnce`), one value decoded on the first read and shared by every later one.
 */
export function heldResultOf(flight: object, held: HeldOutcome, outcomes: FlightOutcomes): unknown {
  if (!sharesDecodedResults(flight)) return outcomes.readResult(held.payload);
  if (decoded.has(held)) return decoded.get(held);
  const value = outcomes.readResult(held.payload);
  decoded.set(held, value);
  return value;
}
