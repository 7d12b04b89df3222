import type { OncelyOutcome } from '../events/oncely-event.js';
import type {
  IdempotencyRecordStore,
  RecordLease,
} from '../record/idempotency-record-store.port.js';
import { LeaseLostError } from '../errors/lease-lost.error.js';
import type { StoredResponse } from '../record/stored-response.js';
import { isTransactionalRecordStore } from '../record/transactional-idempotency-record-store.port.js';
import type { HttpResponse } from '../http/http-response.js';
import { keep, shareable } from './kept-response.js';
import type { LocalCall } from './local-calls.js';
import type { OwnReply } from './own-reply.js';
import type { ResolvedIdempotentRoute } from './protected-route.js';
import { RecordWatchdog } from './record-watchdog.js';
import { toProblemResponse, type ProblemResponse } from '../http/problem-details.js';
import { PayloadTooLargeError } from '../http/request-rejected.errors.js';
import { isStorableStatus } from '../http/response-storage-policy.js';
import { UnsupportedResponseError } from '../http/unsupported-response.error.js';
import { ResponseSignal } from './response-signal.js';
import { TransactionalStoreRequiredError } from './route-setup.errors.js';

/** One run of a handler under an idempotency record the call has acquired. */
export interface RecordExecution {
  readonly store: IdempotencyRecordStore;
  readonly route: ResolvedIdempotentRoute;
  /** Names the route in errors. */
  readonly routeName: string;
  readonly lease: RecordLease;
  /** When `begin` was asked for the lease (`performance.now()` time): its TTL counts from then. */
  readonly askedAt: number;
  /** The guard flight's signal, if there is one: losing that lease aborts the handler too. */
  readonly outerSignal: () => AbortSignal;
  /** Whether the guard flight's lease still holds, asked now; none without a guard. */
  readonly outerLease?: () => Promise<boolean>;
  /** Runs the handler (through the route's SingleFlight, if any) under `signalOf`. */
  readonly run: (transaction: unknown, signalOf: () => AbortSignal) => Promise<HttpResponse>;
  /** Receives the handler's own response, kept or not. */
  readonly reply: OwnReply;
  /** This process's call for the identity: duplicates ask it whether the lease still holds. */
  readonly local: LocalCall;
  readonly emit: (outcome: OncelyOutcome, error?: unknown) => void;
}

/** A handler's response refused as one oncely cannot keep: of a kind, or of a size. */
function isUnkeptResponse(
  error: unknown,
): error is UnsupportedResponseError | PayloadTooLargeError {
  return (
    error instanceof UnsupportedResponseError ||
    (error instanceof PayloadTooLargeError && error.subject === 'response')
  );
}

/** The answer kept for a handler whose response could not be kept. */
function keptRefusalOf(error: UnsupportedResponseError | PayloadTooLargeError): StoredResponse {
  const problem = toProblemResponse(error) as ProblemResponse;
  const detail =
    'The request ran once but its response could not be kept; retries of this key get this error.';
  return {
    status: problem.status,
    headers: problem.headers,
    body: { kind: 'json', value: { ...problem.body, detail } },
  };
}

/**
 * Runs the handler while a watchdog keeps the record's lease, and completes the record with its
 * response (in the handler's transaction on a `transactional` route). A response that must not
 * be kept, or a thrown error, releases the record so that a retry runs again; a response oncely
 * cannot keep (a stream, a file, one above `maxResponseBytes`) is answered with its refusal,
 * which the record keeps unless the route is transactional. At `maxDuration`
 * it stops waiting for the handler, releases the record and throws `MaxDurationExceededError`.
 */
export async function executeUnderRecord(execution: RecordExecution): Promise<StoredResponse> {
  const { store, route, lease, emit } = execution;
  const watchdog = new RecordWatchdog(
    store,
    lease,
    { leaseTtl: route.leaseTtl, askedAt: execution.askedAt, maxDuration: route.maxDuration },
    execution.outerSignal,
  );
  // The key stays taken in this process while either lease holds: a release of the record alone
  // (an admin without the coordinator) leaves the guard's, which a duplicate would join and wait
  // on until this handler ends, so it must be refused as a duplicate in flight instead.
  const { outerLease } = execution;
  execution.local.confirm =
    outerLease === undefined
      ? () => watchdog.confirmLease()
      : async () => (await watchdog.confirmLease()) || outerLease();
  execution.local.leaseRemainingMs = () => watchdog.leaseRemainingMs();
  let settled = false;
  const produce = async (transaction: unknown): Promise<StoredResponse> => {
    // At maxDuration the call stops waiting: a transaction rolls back, nothing is completed.
    try {
      const response = await watchdog.bound(execution.run(transaction, () => watchdog.signal));
      execution.reply.hold(response);
      if (!isStorableStatus(response.status)) {
        throw ResponseSignal.unkept(shareable(response, route));
      }
      return keep(response, route);
    } catch (error) {
      // Only the handler's response told that it cannot be kept, so the handler ran and its
      // effect happened: the record keeps the refusal, and a retry gets it instead of a re-run.
      // In a transaction the effect rolls back with it, and nothing is kept.
      if (!isUnkeptResponse(error) || route.transactional) throw error;
      const refusal = keptRefusalOf(error);
      execution.reply.hold(refusal);
      // oncely's own answer, kept whatever `maxResponseBytes` (a limit on the app's responses).
      return { ...refusal, headers: route.replayHeaders.pick(refusal.headers) };
    }
  };
  try {
    let stored: StoredResponse;
    if (route.transactional) {
      if (!isTransactionalRecordStore(store)) {
        throw new TransactionalStoreRequiredError(execution.routeName);
      }
      stored = await store.runInTransaction(lease, async (transaction) => {
        const response = await produce(transaction);
        return { response, result: response };
      });
    } else {
      stored = await produce(undefined);
      await store.complete(lease, stored);
    }
    settled = true;
    emit('executed');
    return stored;
  } catch (error) {
    const expired = watchdog.expired;
    if (expired !== undefined) {
      // Not a transient failure: the guard hands the expiry to its waiters, and the record is
      // freed so that a retry runs.
      settled = true;
      await store.release(lease).catch(() => undefined);
      emit('lease_lost', expired);
      throw expired;
    }
    if (error instanceof LeaseLostError || watchdog.lost) {
      settled = true;
      const lost = watchdog.leaseLost(error instanceof LeaseLostError ? undefined : error);
      emit('lease_lost', lost);
      throw lost;
    }
    throw error;
  } finally {
    watchdog.stop();
    if (!settled) {
      // A transient failure (thrown error, 5xx, …): free the record so a retry runs again.
      await store.release(lease).catch(() => undefined);
      emit('failed');
    }
  }
}
