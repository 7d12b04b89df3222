import { FlightBusyError } from '../flight/flight-busy.error.js';
import { flightErrorOutcome } from '../flight/flight-error.outcome.js';
import type { HttpResponse } from '../http/http-response.js';
import { isDeterministicClientError, isStorableStatus } from '../http/response-storage-policy.js';
import type { StoredResponse } from '../record/stored-response.js';
import { httpCallFailurePolicy } from './call-failure.policy.js';
import { HandlerDeadline } from './handler-deadline.js';
import { handlerContext } from './handler-context.js';
import { keep, shareable, sharedReply } from './kept-response.js';
import { refusedOnceExecuting } from './local-calls.js';
import { OwnReply } from './own-reply.js';
import type {
  CallEnvironment,
  HandlerContext,
  ProtectedCall,
  ProtectedCallResult,
} from './protected-call.types.js';
import type { ResolvedSingleFlightRoute } from './protected-route.js';
import { ResponseSignal } from './response-signal.js';

/**
 * A `@SingleFlight` route's call: concurrent calls with one key, across every process sharing the
 * coordinator, run the handler once and share its kept response; a deterministic 4xx is shared
 * for `errorTtl`; anything else that must not be kept frees the key at once. The handler is
 * bounded by `maxDuration` and aborted when the flight's lease is lost. A read-only call (`HEAD`)
 * shares what the others keep or produce but never leads: where it would, its handler runs
 * uncoordinated and nothing of it is cached.
 */
export async function runCoalesced(
  env: CallEnvironment,
  call: ProtectedCall,
  route: ResolvedSingleFlightRoute,
  key: string,
  context: HandlerContext,
  /** Whether a durable record encloses the flight: its expiry ends the flight as well. */
  enclosed: boolean,
): Promise<ProtectedCallResult> {
  const { events } = env;
  let localLeaseMs = env.local.duplicateLeaseMs(key, route);
  if (localLeaseMs instanceof Promise) localLeaseMs = await localLeaseMs;
  if (localLeaseMs !== undefined) {
    events.emit('single-flight', 'conflict', route.operation, key);
    throw new FlightBusyError(key, localLeaseMs);
  }
  const own = new OwnReply();
  const local = call.readOnly ? env.local.apart() : env.local.enter(key);
  /** A local joiner of a flight that ran the handler is a duplicate in flight under 'reject'. */
  const refuseJoined = () => {
    if (route.onBusy !== 'reject' || !local.call.executing) return;
    events.emit('single-flight', 'conflict', route.operation, key);
    throw new FlightBusyError(key, env.local.leaseRemainingMs(local.call, route.leaseTtl));
  };
  /** Whether the flight runs this call's own handler: it is then no duplicate of it. */
  let leading = false;
  try {
    // The engine refuses what another service's handler kept, result or error (`ForeignOwnerError`).
    const flown = env.engines.flight.run<StoredResponse>(
      key,
      async (flight) => {
        leading = true;
        env.local.markExecuting(local.call);
        local.call.confirm = () => env.engines.flight.holdsLease(key);
        const deadline = new HandlerDeadline(key, flight.fence, route.maxDuration);
        if (enclosed) deadline.follow(context.signal);
        let response: HttpResponse;
        try {
          const signalOf = () => AbortSignal.any([context.signal, flight.signal, deadline.signal]);
          response = await deadline.bound(
            call.handler(handlerContext(signalOf, context.transaction)),
          );
        } finally {
          deadline.clear();
        }
        own.hold(response);
        if (isDeterministicClientError(response.status)) {
          throw ResponseSignal.kept(keep(response, route));
        }
        if (!isStorableStatus(response.status)) {
          throw ResponseSignal.unkept(shareable(response, route));
        }
        return keep(response, route);
      },
      {
        operation: route.operation,
        leaseTtl: route.leaseTtl,
        resultTtl: route.resultTtl,
        errorTtl: route.errorTtl,
        wait: route.wait,
        onBusy: route.onBusy,
        onCoordinatorDown: route.onCoordinatorDown,
        failurePolicy: httpCallFailurePolicy,
        shared: route.shared,
        neverLead: call.readOnly === true,
      },
    );
    const { value, source } = await refusedOnceExecuting(local.call, flown, () => {
      if (!leading) refuseJoined();
    });
    events.decided(source);
    if (source === 'executed') {
      const mine = own.result;
      if (mine !== undefined) return mine;
    }
    if (source === 'joined') refuseJoined();
    return sharedReply(value);
  } catch (error) {
    events.decided(flightErrorOutcome(error));
    if (!(error instanceof ResponseSignal)) throw error;
    const mine = own.afterSignal(error);
    if (mine !== undefined) return mine;
    refuseJoined();
    return sharedReply(error.response);
  } finally {
    local.leave();
  }
}
