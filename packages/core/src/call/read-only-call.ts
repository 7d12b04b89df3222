import type { BusinessKey } from '../key/key.types.js';
import { runHandler } from './handler-run.js';
import { IdempotencyMismatchError } from './idempotency-conflict.errors.js';
import { sharedReply } from './kept-response.js';
import type {
  CallEnvironment,
  ProtectedCall,
  ProtectedCallResult,
} from './protected-call.types.js';
import type { ResolvedIdempotentRoute } from './protected-route.js';
import { beginOptionsOf, beginRecord, foreignOwner } from './record-protocol.js';

/**
 * A read-only call (an HTTP `HEAD`) on an idempotent route. A completed record answers it, as a
 * replay whose body the platform does not send; a payload mismatch (`422`) and a record of
 * another service (`409`) answer it as they would a `GET`. Without a completed record, or while
 * one is in flight, its handler runs unprotected (through the route's SingleFlight, never leading
 * it) and nothing is kept: a `GET` must never replay the empty body of a `HEAD`.
 *
 * The store has no read-only `begin`: when it hands the call the record, the call lets it go at
 * once, before its handler runs. It never waits for a call in flight nor shares one.
 */
export async function runReadOnly(
  env: CallEnvironment,
  call: ProtectedCall,
  route: ResolvedIdempotentRoute,
  key: BusinessKey,
): Promise<ProtectedCallResult> {
  const startedAt = env.clock.now();
  const options = beginOptionsOf(env, route, call.keys.previousIdentities);
  const begun = await beginRecord(env, route, key, options, startedAt);
  switch (begun.kind) {
    case 'replay':
      env.events.emit('idempotency', 'replayed', route.operation, key.identity, startedAt);
      return sharedReply(begun.response);
    case 'foreign_owner':
      throw foreignOwner(env, route, key.identity, begun.owner);
    case 'mismatch':
      env.events.emit('idempotency', 'mismatch', route.operation, key.identity);
      throw new IdempotencyMismatchError(key.identity);
    case 'acquired':
      await env.engines.store.release(begun.lease);
      break;
    case 'in_progress':
      break;
  }
  return runHandler(env, call, undefined);
}
