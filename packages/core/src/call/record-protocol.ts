import type { BusinessKey } from '../key/key.types.js';
import type { BeginOptions, BeginOutcome } from '../record/idempotency-record-store.port.js';
import { RecordQuotaExceededError } from '../security/record-quota-exceeded.error.js';
import { ForeignOwnerError } from '../errors/foreign-owner.error.js';
import { runHandler } from './handler-run.js';
import {
  IdempotencyConflictError,
  IdempotencyMismatchError,
} from './idempotency-conflict.errors.js';
import { withoutReplayMark } from './kept-response.js';
import type { GuardedOutcome, LocalCall } from './local-calls.js';
import type { OwnReply } from './own-reply.js';
import type { CallEnvironment, ProtectedCall } from './protected-call.types.js';
import type { ResolvedIdempotentRoute } from './protected-route.js';
import { executeUnderRecord } from './record-execution.js';

const POLL_MIN_MS = 25;
const POLL_MAX_MS = 1_000;

/** One idempotent call as the record protocol runs it. */
export interface RecordedCall {
  readonly call: ProtectedCall;
  readonly route: ResolvedIdempotentRoute;
  readonly key: BusinessKey;
  /** The guard flight's signal, if there is one: losing that lease aborts the handler too. */
  readonly outerSignal: () => AbortSignal;
  /** Whether the guard flight's lease still holds, asked now; none without a guard. */
  readonly outerLease?: () => Promise<boolean>;
  /** This process's call for the identity, marked executing once the record is acquired. */
  readonly local: LocalCall;
  readonly reply: OwnReply;
}

/**
 * The durable record's protocol, run by the guard's leader (or by the call itself on a store
 * alone). `begin` answers with a replay, a mismatch (422), a record in flight (polled with
 * backoff while `onBusy: 'wait'` allows, else 409), or the record acquired: the handler then
 * runs under it (`executeUnderRecord`), through the route's SingleFlight if it has one.
 */
export async function runUnderRecord(
  env: CallEnvironment,
  recorded: RecordedCall,
  options = beginOptionsOf(env, recorded.route, recorded.call.keys.previousIdentities),
): Promise<GuardedOutcome> {
  const { call, route, key } = recorded;
  const { store } = env.engines;
  const startedAt = env.clock.now();
  const deadline = startedAt + (route.onBusy === 'wait' ? route.wait : 0);
  const { events } = env;
  for (let attempt = 0; ; attempt++) {
    const askedAt = performance.now();
    const begun = await beginRecord(env, route, key, options, startedAt);
    switch (begun.kind) {
      case 'replay':
        return { digest: key.digest, response: begun.response, replayed: true };
      case 'foreign_owner':
        throw foreignOwner(env, route, key.identity, begun.owner);
      case 'mismatch':
        events.emit('idempotency', 'mismatch', route.operation, key.identity);
        throw new IdempotencyMismatchError(key.identity);
      case 'in_progress': {
        const remaining = deadline - env.clock.now();
        if (remaining <= 0) {
          events.emit('idempotency', 'conflict', route.operation, key.identity);
          throw new IdempotencyConflictError(key.identity, begun.retryAfterMs);
        }
        const step = Math.min(POLL_MAX_MS, POLL_MIN_MS * 2 ** attempt);
        await delay(Math.max(1, Math.min(step, begun.retryAfterMs, remaining)));
        continue;
      }
      case 'acquired': {
        env.local.markExecuting(recorded.local);
        const stored = await executeUnderRecord({
          store,
          route,
          routeName: call.route.name,
          lease: begun.lease,
          askedAt,
          outerSignal: recorded.outerSignal,
          ...(recorded.outerLease && { outerLease: recorded.outerLease }),
          run: async (transaction, signalOf) => {
            const inner = await runHandler(env, call, transaction, signalOf);
            return inner.replayed ? withoutReplayMark(inner.response) : inner.response;
          },
          reply: recorded.reply,
          local: recorded.local,
          emit: (outcome, error) =>
            events.emit('idempotency', outcome, route.operation, key.identity, startedAt, error),
        });
        return { digest: key.digest, response: stored, replayed: false };
      }
    }
  }
}

/** What `begin` is asked with for `route`'s records. */
export function beginOptionsOf(
  env: CallEnvironment,
  route: ResolvedIdempotentRoute,
  previousIdentities: readonly string[] | undefined,
): BeginOptions {
  const owner = env.engines.service;
  return {
    leaseTtlMs: route.leaseTtl,
    retentionMs: route.retention,
    ...(previousIdentities && { previousIdentities }),
    ...(owner !== undefined && { owner, shared: route.shared }),
    ...(env.engines.serviceAliases && { ownerAliases: env.engines.serviceAliases }),
  };
}

/** The store's `begin`; a refusal or failure is reported as an event first. */
export function beginRecord(
  env: CallEnvironment,
  route: ResolvedIdempotentRoute,
  key: BusinessKey,
  options: BeginOptions,
  startedAt: number,
): Promise<BeginOutcome> {
  return env.engines.store.begin(key.identity, key.digest, options).catch((error: unknown) => {
    // A message or a job refused here has no client to hear of it but the event.
    const outcome = error instanceof RecordQuotaExceededError ? 'refused' : 'failed';
    env.events.emit('idempotency', outcome, route.operation, key.identity, startedAt, error);
    throw error;
  });
}

/** Reported as an event carrying both owners, which the Prometheus listener counts. */
export function foreignOwner(
  env: CallEnvironment,
  route: ResolvedIdempotentRoute,
  identity: string,
  foreign: string,
): ForeignOwnerError {
  const error = new ForeignOwnerError(identity, env.engines.service ?? '', foreign);
  env.events.emit('idempotency', 'foreign_owner', route.operation, identity, undefined, error);
  return error;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
