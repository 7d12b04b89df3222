import { ForeignOwnerError } from '../errors/foreign-owner.error.js';
import { LeaseLostError } from '../errors/lease-lost.error.js';
import { FlightBusyError } from '../flight/flight-busy.error.js';
import { MaxDurationExceededError } from '../flight/max-duration-exceeded.error.js';
import { guardFlightKey } from '../flight/flight-lease-admin.port.js';
import type { BusinessKey } from '../key/key.types.js';
import { recordGuardFailurePolicy } from './call-failure.policy.js';
import { runFlightCall } from './flight-call.js';
import {
  IdempotencyConflictError,
  IdempotencyMismatchError,
} from './idempotency-conflict.errors.js';
import { sharedReply } from './kept-response.js';
import type { GuardedOutcome } from './local-calls.js';
import type {
  CallEnvironment,
  ProtectedCall,
  ProtectedCallResult,
} from './protected-call.types.js';
import type { ResolvedIdempotentRoute } from './protected-route.js';
import { runUnderRecord } from './record-protocol.js';

/**
 * The guard pays for itself in front of a store slower than the coordinator (SQL), and for
 * routes that wait, which it wakes by notice instead of polling. A store that answers at cache
 * speed and already refuses in-flight duplicates gains nothing from it but two round trips.
 */
export function needsGuard(env: CallEnvironment, route: ResolvedIdempotentRoute): boolean {
  return env.engines.store.answersAtCacheSpeed !== true || route.onBusy !== 'reject';
}

/**
 * An idempotent call behind the guard: a flight on the identity refuses in-flight duplicates at
 * the coordinator's lease and serves replays from its result cache, while its leader runs the
 * record protocol, so the durable record stays the authority. The flight shares no failure: a
 * waiter whose leader failed asks the record store itself.
 */
export function runGuarded(
  env: CallEnvironment,
  call: ProtectedCall,
  route: ResolvedIdempotentRoute,
  key: BusinessKey,
): Promise<ProtectedCallResult> {
  const { events, engines } = env;
  const flightKey = guardFlightKey(key.identity);
  const startedAt = env.clock.now();
  const conflict = (retryAfterMs: number) => {
    events.emit('idempotency', 'conflict', route.operation, key.identity);
    return new IdempotencyConflictError(key.identity, retryAfterMs);
  };
  return runFlightCall<GuardedOutcome>(env, {
    engine: engines.guard,
    key: flightKey,
    lead: (flight, reply, local) =>
      runUnderRecord(env, {
        call,
        route,
        key,
        outerSignal: () => flight.signal,
        outerLease: () => engines.guard.holdsLease(flightKey),
        local,
        reply,
      }),
    options: {
      operation: route.operation,
      leaseTtl: route.leaseTtl,
      resultTtl: Math.min(route.replayCacheTtl, route.retention),
      errorTtl: 0,
      wait: route.wait,
      onBusy: route.onBusy,
      failurePolicy: recordGuardFailurePolicy,
      onCoordinatorDown: 'open',
      shared: route.shared,
    },
    refusal: conflict,
    shared: (outcome) => {
      if (outcome.digest !== key.digest) {
        events.emit('idempotency', 'mismatch', route.operation, key.identity);
        throw new IdempotencyMismatchError(key.identity);
      }
      events.emit('idempotency', 'replayed', route.operation, key.identity, startedAt);
      return sharedReply(outcome.response);
    },
    failure: (error) => {
      // The guard's lease held by another service, or its cache filled by one (the coordinator
      // is shared); the record's refusal was reported already.
      if (error instanceof ForeignOwnerError && error.key === flightKey) {
        const refusal = new ForeignOwnerError(key.identity, error.owner, error.foreignOwner);
        events.emit(
          'idempotency',
          'foreign_owner',
          route.operation,
          key.identity,
          startedAt,
          refusal,
        );
        return refusal;
      }
      // The guard's lease lost (an operator released it, or it expired): named by the identity
      // the caller knows, not by the guard's own flight key.
      if (
        error instanceof LeaseLostError &&
        !(error instanceof MaxDurationExceededError) &&
        error.identity === flightKey
      ) {
        return new LeaseLostError(key.identity, error.fence, {
          reason: error.reason,
          cause: error,
        });
      }
      if (error instanceof FlightBusyError) return conflict(error.leaseRemainingMs);
      return error;
    },
  });
}
