import { ForeignOwnerError } from '../errors/foreign-owner.error.js';
import { LeaseLostError } from '../errors/lease-lost.error.js';
import { FlightBusyError } from '../flight/flight-busy.error.js';
import { MaxDurationExceededError } from '../flight/max-duration-exceeded.error.js';
import { guardFlightKey } from '../flight/flight-lease-admin.port.js';
import type { BusinessKey } from '../key/key.types.js';
import { recordGuardFailurePolicy } from './call-failure.policy.js';
import {
  IdempotencyConflictError,
  IdempotencyMismatchError,
} from './idempotency-conflict.errors.js';
import { sharedReply } from './kept-response.js';
import {
  refusedOnceExecuting,
  refuseRunningDuplicate,
  type GuardedOutcome,
} from './local-calls.js';
import { OwnReply } from './own-reply.js';
import type {
  CallEnvironment,
  ProtectedCall,
  ProtectedCallResult,
} from './protected-call.types.js';
import type { ResolvedIdempotentRoute } from './protected-route.js';
import { runUnderRecord } from './record-protocol.js';
import { ResponseSignal } from './response-signal.js';

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
export async function runGuarded(
  env: CallEnvironment,
  call: ProtectedCall,
  route: ResolvedIdempotentRoute,
  key: BusinessKey,
): Promise<ProtectedCallResult> {
  const { events } = env;
  const flightKey = guardFlightKey(key.identity);
  const startedAt = env.clock.now();
  const refusing = refuseRunningDuplicate(env.local, events, flightKey, route, key.identity);
  if (refusing) await refusing;
  const own = new OwnReply();
  const local = env.local.enter(flightKey);
  /** A local joiner of a flight that ran the handler is a duplicate in flight under 'reject'. */
  const refuseJoined = () => {
    if (route.onBusy !== 'reject' || !local.call.executing) return;
    events.emit('idempotency', 'conflict', route.operation, key.identity);
    const retryAfterMs = env.local.leaseRemainingMs(local.call, route.leaseTtl);
    throw new IdempotencyConflictError(key.identity, retryAfterMs);
  };
  /** Whether the guard flight runs this call's own work: its handler is then no duplicate. */
  let leading = false;
  try {
    const guarded = env.engines.guard.run<GuardedOutcome>(
      flightKey,
      (flight) => {
        leading = true;
        return runUnderRecord(env, {
          call,
          route,
          key,
          outerSignal: () => flight.signal,
          outerLease: () => env.engines.guard.holdsLease(flightKey),
          local: local.call,
          reply: own,
        });
      },
      {
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
    );
    const { value, source } = await refusedOnceExecuting(local.call, guarded, () => {
      if (!leading) refuseJoined();
    });
    if (source === 'executed') {
      const mine = own.result;
      if (mine !== undefined) return mine;
    }
    if (source === 'joined') refuseJoined();
    if (value.digest !== key.digest) {
      events.emit('idempotency', 'mismatch', route.operation, key.identity);
      throw new IdempotencyMismatchError(key.identity);
    }
    events.emit('idempotency', 'replayed', route.operation, key.identity, startedAt);
    return sharedReply(value.response);
  } catch (error) {
    if (error instanceof ResponseSignal) {
      // Not kept (5xx, 429, …): the leader answers with it; a local joiner shares it.
      const mine = own.afterSignal(error);
      if (mine !== undefined) return mine;
      refuseJoined();
      return sharedReply(error.response);
    }
    // The guard's lease held by another service, or its cache filled by one (the coordinator is
    // shared); the record's refusal was reported already.
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
      throw refusal;
    }
    // The guard's lease lost (an operator released it, or it expired): named by the identity
    // the caller knows, not by the guard's own flight key.
    if (
      error instanceof LeaseLostError &&
      !(error instanceof MaxDurationExceededError) &&
      error.identity === flightKey
    ) {
      throw new LeaseLostError(key.identity, error.fence, { reason: error.reason, cause: error });
    }
    if (error instanceof FlightBusyError) {
      events.emit('idempotency', 'conflict', route.operation, key.identity);
      throw new IdempotencyConflictError(key.identity, error.leaseRemainingMs);
    }
    throw error;
  } finally {
    local.leave();
  }
}
