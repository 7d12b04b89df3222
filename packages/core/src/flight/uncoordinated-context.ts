import type { FlightContext } from './flight.types.js';

/** Without a lease there is nothing to lose: the signal never fires. */
export function uncoordinatedContext(key: string): FlightContext {
  let signal: AbortSignal | undefined;
  return {
    key,
    fence: 0,
    get signal() {
      return (signal ??= new AbortController().signal);
    },
  };
}
