import type { OncelyOutcome } from '../events/oncely-event.js';
import { flightErrorOutcome } from '../flight/flight-error.outcome.js';
import type { FlightContext, FlightResult, FlightRunOptions } from '../flight/flight.types.js';
import { sharedReply } from './kept-response.js';
import { refusedOnceExecuting, type LocalCall } from './local-calls.js';
import { OwnReply } from './own-reply.js';
import type { CallEnvironment, FlightRunner, ProtectedCallResult } from './protected-call.types.js';
import { ResponseSignal } from './response-signal.js';

/** One call's way through a flight: the guard's on an identity, or a `@SingleFlight` route's. */
export interface FlightCall<T> {
  readonly engine: FlightRunner;
  /** The flight's key, which this process's calls of it share too. */
  readonly key: string;
  readonly options: FlightRunOptions & {
    readonly onBusy: 'reject' | 'wait';
    readonly leaseTtl: number;
  };
  /**
   * A call that stands for nothing another could share (a `HEAD`): it neither joins this
   * process's call of the key nor is refused for it.
   */
  readonly apart?: boolean;
  /**
   * The work when this call leads: it runs the handler as `local` (marking it executing) and
   * hands the handler's response to `own`.
   */
  readonly lead: (flight: FlightContext, own: OwnReply, local: LocalCall) => Promise<T>;
  /** The 409 (or busy) error of a duplicate of a running handler, reported. */
  readonly refusal: (retryAfterMs: number) => Error;
  /** What a caller that shared the run, or its cached result, answers with. */
  readonly shared: (value: T) => ProtectedCallResult;
  /** Hears how the flight decided for this call, where the mechanism reports it. */
  readonly decided?: (outcome: OncelyOutcome) => void;
  /** The error this call throws for one the flight threw; the same by default. */
  readonly failure?: (error: unknown) => unknown;
}

/**
 * The leader/joiner routine, once for every flight a call takes part in, on this node and
 * across nodes:
 *
 * - under `onBusy: 'reject'`, a duplicate of a handler this process runs is refused before it
 *   joins (`refusal`), as one from another node is at the lease, a `HEAD` too;
 * - the call joins this process's call of the key, or starts it, and runs the flight: the leader
 *   runs `lead`, the others share its result (`shared`);
 * - a caller that joined while the first only read a result is refused once the handler turns out
 *   to run, under `'reject'`, when it starts rather than when it ends;
 * - the leader answers with its handler's own response (`OwnReply`), every header included,
 *   also when it was carried out of the flight as a failure (`ResponseSignal`), which the others
 *   share as it is kept.
 */
export async function runFlightCall<T>(
  env: CallEnvironment,
  call: FlightCall<T>,
): Promise<ProtectedCallResult> {
  const { key, options } = call;
  let duplicateLeaseMs = env.local.duplicateLeaseMs(key, options);
  if (duplicateLeaseMs instanceof Promise) duplicateLeaseMs = await duplicateLeaseMs;
  if (duplicateLeaseMs !== undefined) throw call.refusal(duplicateLeaseMs);
  let held: FlightResult<T> | undefined;
  try {
    held = call.engine.peek?.<T>(key, options);
  } catch (error) {
    throw failureOf(call, error);
  }
  if (held !== undefined) {
    call.decided?.(held.source);
    return call.shared(held.value);
  }
  const own = new OwnReply();
  const local = call.apart ? env.local.apart() : env.local.enter(key);
  const refuseJoined = () => {
    if (options.onBusy !== 'reject' || !local.call.executing) return;
    throw call.refusal(env.local.leaseRemainingMs(local.call, options.leaseTtl));
  };
  let leading = false;
  try {
    const flown = call.engine.run<T>(
      key,
      (flight) => {
        leading = true;
        return call.lead(flight, own, local.call);
      },
      options,
    );
    const { value, source } = await refusedOnceExecuting(local.call, flown, () => {
      if (!leading) refuseJoined();
    });
    call.decided?.(source);
    if (source === 'executed') {
      const mine = own.result;
      if (mine !== undefined) return mine;
    }
    if (source === 'joined') refuseJoined();
    return call.shared(value);
  } catch (error) {
    if (!(error instanceof ResponseSignal)) throw failureOf(call, error);
    call.decided?.(flightErrorOutcome(error));
    // Not kept (5xx, 429, …): the leader answers with it; a local joiner shares it.
    const mine = own.afterSignal(error);
    if (mine !== undefined) return mine;
    refuseJoined();
    return sharedReply(error.response);
  } finally {
    local.leave();
  }
}

/** What `call` throws for an error of its flight, reported as the flight's outcome. */
function failureOf<T>(call: FlightCall<T>, error: unknown): unknown {
  call.decided?.(flightErrorOutcome(error));
  return call.failure ? call.failure(error) : error;
}
