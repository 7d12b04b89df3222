import { FlightBusyError } from '../flight/flight-busy.error.js';
import type { HttpResponse } from '../http/http-response.js';
import { isDeterministicClientError, isStorableStatus } from '../http/response-storage-policy.js';
import type { StoredResponse } from '../record/stored-response.js';
import { httpCallFailurePolicy } from './call-failure.policy.js';
import { runFlightCall } from './flight-call.js';
import { HandlerDeadline } from './handler-deadline.js';
import { handlerContext } from './handler-context.js';
import { keep, shareable, sharedReply } from './kept-response.js';
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
export function runCoalesced(
  env: CallEnvironment,
  call: ProtectedCall,
  route: ResolvedSingleFlightRoute,
  key: string,
  context: HandlerContext,
  /** Whether a durable record encloses the flight: its expiry ends the flight as well. */
  enclosed: boolean,
): Promise<ProtectedCallResult> {
  const { events, engines } = env;
  return runFlightCall<StoredResponse>(env, {
    // It refuses what another service's handler kept, result or error (`ForeignOwnerError`).
    engine: engines.flight,
    key,
    apart: call.readOnly,
    lead: async (flight, own, local) => {
      env.local.markExecuting(local);
      local.confirm = () => engines.flight.holdsLease(key);
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
    options: {
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
    refusal: (retryAfterMs) => {
      events.emit('single-flight', 'conflict', route.operation, key);
      return new FlightBusyError(key, retryAfterMs);
    },
    shared: sharedReply,
    decided: (outcome) => events.decided(outcome),
  });
}
