import type { BusinessKey } from '../key/key.types.js';
import { ForeignOwnerError } from '../errors/foreign-owner.error.js';
import { IdempotencyConflictError } from './idempotency-conflict.errors.js';
import { sharedReply } from './kept-response.js';
import {
  refusedOnceExecuting,
  refuseRunningDuplicate,
  type GuardedOutcome,
  type LocalCall,
} from './local-calls.js';
import { OwnReply } from './own-reply.js';
import { noOuterSignal } from './handler-context.js';
import type {
  CallEnvironment,
  ProtectedCall,
  ProtectedCallResult,
} from './protected-call.types.js';
import type { ResolvedIdempotentRoute } from './protected-route.js';
import { beginOptionsOf, runUnderRecord } from './record-protocol.js';

/**
 * An idempotent call on the record store alone: its `begin` is the lock, the replay and the
 * mismatch check; a replay the store holds in this process (`peekReplay`) answers before it.
 * Calls of this process with the same identity and payload that arrive while the first is
 * still claiming the record share what it finds instead of asking the store again.
 */
export async function runRecorded(
  env: CallEnvironment,
  call: ProtectedCall,
  route: ResolvedIdempotentRoute,
  key: BusinessKey,
): Promise<ProtectedCallResult> {
  const localKey = `${key.identity}:idem`;
  const startedAt = env.clock.now();
  const refusing = refuseRunningDuplicate(env.local, env.events, localKey, route, key.identity);
  if (refusing) await refusing;
  const options = beginOptionsOf(env, route, call.keys.previousIdentities);
  const held = env.engines.store.peekReplay?.(key.identity, key.digest, options);
  if (held !== undefined) {
    env.events.emit('idempotency', 'replayed', route.operation, key.identity, startedAt);
    return sharedReply(held);
  }
  const local = env.local.enter(localKey);
  const first = local.call.recorded;
  if (first !== undefined && first.digest === key.digest) {
    return shareRecorded(env, first.outcome, local.call, route, key, startedAt);
  }
  const own = new OwnReply();
  const outcome = runUnderRecord(
    env,
    {
      call,
      route,
      key,
      outerSignal: noOuterSignal,
      local: local.call,
      reply: own,
    },
    options,
  );
  local.call.recorded ??= { digest: key.digest, outcome };
  try {
    const { replayed, response } = await outcome;
    if (!replayed) {
      const mine = own.result;
      if (mine !== undefined) return mine;
    }
    env.events.emit('idempotency', 'replayed', route.operation, key.identity, startedAt);
    return sharedReply(response);
  } catch (error) {
    // Not kept (5xx, 429, …): the record was released and the caller gets the response as is.
    const mine = own.afterSignal(error);
    if (mine !== undefined) return mine;
    throw error;
  } finally {
    local.leave();
  }
}

/** A replay is shared; a call that went on to run the handler makes this one a 409. */
async function shareRecorded(
  env: CallEnvironment,
  first: Promise<GuardedOutcome>,
  local: LocalCall,
  route: ResolvedIdempotentRoute,
  key: BusinessKey,
  startedAt: number,
): Promise<ProtectedCallResult> {
  const conflict = () => {
    env.events.emit('idempotency', 'conflict', route.operation, key.identity);
    return new IdempotencyConflictError(
      key.identity,
      env.local.leaseRemainingMs(local, route.leaseTtl),
    );
  };
  let outcome: GuardedOutcome;
  let refusal: IdempotencyConflictError | undefined;
  try {
    outcome = await refusedOnceExecuting(local, first, () => {
      throw (refusal = conflict());
    });
  } catch (error) {
    if (refusal !== undefined && error === refusal) throw error;
    if (local.executing) throw conflict();
    // Each call refused for a foreign owner is reported once, as the first one was.
    if (error instanceof ForeignOwnerError) {
      env.events.emit(
        'idempotency',
        'foreign_owner',
        route.operation,
        key.identity,
        undefined,
        error,
      );
    }
    throw error;
  }
  if (local.executing || !outcome.replayed) throw conflict();
  env.events.emit('idempotency', 'replayed', route.operation, key.identity, startedAt);
  return sharedReply(outcome.response);
}
