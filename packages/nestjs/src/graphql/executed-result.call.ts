import { Logger } from '@nestjs/common';
import {
  resolveCallKeys,
  type ProtectedCallExecutor,
  type ProtectedRoute,
} from '@oncely/core/adapter';
import type { BusinessKey, KeyContext } from '@oncely/core';
import { randomUUID } from 'node:crypto';
import type { TransportCall } from '../call/protected-call.interception.js';
import {
  executedResultCaptureOf,
  type ExecutedResult,
  type ExecutedResultCapture,
  type ExecutedResultSink,
  type FieldOutcome,
} from './executed-result.capture.js';
import { executedResultRoute, withExecutedResultId } from './executed-result.route.js';
import { responsePathOf, type FieldInfo, type ResponsePath } from './graphql-info.types.js';
import { replayedValue } from './kept-selection.replay.js';
import {
  resultCaptureMissingError,
  resultUnavailableError,
  selectionMismatchError,
  withRouteBusyAdvice,
} from './oncely-graphql.error.js';
import { selectionFingerprint } from './selection.fingerprint.js';

/** What the call's own record keeps: the selection answered, and the id of the result's record. */
interface KeptCall {
  readonly graphqlSelection: string;
  readonly executedResult: string;
}

const logger = new Logger('OncelyGraphQL');

/**
 * An idempotent GraphQL field, replayed as its first client received it. Two records:
 *
 * - the call's own, completed as soon as the resolver returns (in its transaction, if the route
 *   is `transactional`), holding the selection's fingerprint and the id of a second record; so
 *   the effect is settled whatever happens to the response;
 * - the executed result's, claimed before the first is completed (a duplicate arriving in
 *   between finds it in flight, as it found the call) and completed with the field's executed
 *   subtree and errors when the response is about to be sent (`OncelyGraphQLPlugin`).
 *
 * A replay checks the selection, reads the second record and answers with it; its field
 * resolvers do not run. If the server dies in between, the second record's lease runs out and
 * a retry finds it free: it answers `ONCELY_RESULT_UNAVAILABLE` rather than run the effect again.
 *
 * Aliases of the field under one key in one operation are one call: the second shares the
 * first's outcome, as its result record only completes once this very response is sent.
 */
export async function runKeepingExecutedResult(call: TransportCall): Promise<unknown> {
  try {
    return await runField(call);
  } catch (error) {
    throw withRouteBusyAdvice(call.route, error);
  }
}

async function runField(call: TransportCall): Promise<unknown> {
  const { route, keyContext, context } = call;
  const [, , contextValue, info] = context.getArgs<[unknown, unknown, unknown, FieldInfo]>();
  const capture = executedResultCaptureOf(contextValue);
  if (!capture) throw resultCaptureMissingError(route.name);
  const field = { selection: selectionFingerprint(info), path: responsePathOf(info.path), info };
  const key = idempotencyKeyOf(route, keyContext);
  if (!key) return (await runOnce(call, capture, field)).value;

  const outcome = deferred<FieldOutcome>();
  // Read only by a later alias, if any: a failure is this field's own error first.
  outcome.promise.catch(() => undefined);
  const first = capture.firstCall(key.identity, {
    digest: key.digest,
    selection: field.selection,
    path: field.path,
    outcome: outcome.promise,
  });
  if (first?.digest === key.digest && first.selection === field.selection) {
    const { value, replayed } = await first.outcome;
    if (replayed) capture.replay(field.path, replayed);
    else capture.mirror(field.path, first.path);
    return value;
  }
  // Other arguments or another selection under the key: once the first alias's call is
  // settled, this one is answered as a retry sending them would be (422, or run if it failed).
  await first?.outcome.catch(() => undefined);
  try {
    const own = await runOnce(call, capture, field);
    outcome.resolve(own);
    return own.value;
  } catch (error) {
    outcome.reject(error);
    throw error;
  }
}

/** The field as this operation asks for it. */
interface OperationField {
  readonly selection: string;
  readonly path: ResponsePath;
  readonly info: FieldInfo;
}

/** Runs the field under its records, or replays it; keeps or replays it in the capture. */
async function runOnce(
  call: TransportCall,
  capture: ExecutedResultCapture,
  { selection, path, info }: OperationField,
): Promise<FieldOutcome> {
  const { executor, route, keyContext, run } = call;
  const own: { value?: unknown; result?: PendingResult } = {};
  let kept: unknown;
  try {
    ({ value: kept } = await executor.executeValue({
      route,
      keyContext,
      run: async () => {
        const value = await run();
        const id = randomUUID();
        own.result = await claimResult(executor, route, keyContext, id);
        own.value = value;
        return { graphqlSelection: selection, executedResult: id } satisfies KeptCall;
      },
    }));
  } catch (error) {
    await own.result?.sink(undefined);
    throw error;
  }
  if (own.result) {
    capture.keep(path, own.result.sink);
    return { value: own.value };
  }
  if (!isKeptCall(kept)) throw resultUnavailableError(route.name);
  if (kept.graphqlSelection !== selection) throw selectionMismatchError(route.name);
  const result = await readResult(executor, route, keyContext, kept.executedResult);
  capture.replay(path, result);
  return { value: replayedValue(result.data, info.returnType, info.schema), replayed: result };
}

/**
 * The call's idempotency key, to tell aliases under one key apart; `undefined` when it cannot be
 * built, and the executor then refuses the call as it would any other.
 */
function idempotencyKeyOf(route: ProtectedRoute, keyContext: KeyContext): BusinessKey | undefined {
  try {
    return resolveCallKeys(route, keyContext).idempotency;
  } catch {
    return undefined;
  }
}

interface PendingResult {
  /** Completes the result's record, or frees it, without a word, when there is no result. */
  readonly sink: ExecutedResultSink;
}

/**
 * Claims the result's record and holds it (the executor renews its lease) until the sink is
 * called. If it cannot be claimed, the call goes on all the same: its effect has happened, and a
 * retry will find no result rather than run it again.
 */
async function claimResult(
  executor: ProtectedCallExecutor,
  route: ProtectedRoute,
  keyContext: KeyContext,
  id: string,
): Promise<PendingResult> {
  const claimed = deferred<void>();
  const executed = deferred<ExecutedResult | undefined>();
  let abandoned = false;
  const stored = executor
    .executeValue({
      route: executedResultRoute(route),
      keyContext: withExecutedResultId(keyContext, id),
      run: async ({ signal }) => {
        claimed.resolve();
        // A lost lease confirms nothing: stop holding the record's flight for a response.
        const result = await Promise.race([executed.promise, untilAborted(signal)]);
        if (!result) throw new Error('no executed result to keep');
        return result;
      },
    })
    .then(
      () => undefined,
      (error: unknown) => {
        if (abandoned) return;
        logger.warn(
          `The response to ${route.name} was not kept; its retries get ONCELY_RESULT_UNAVAILABLE: ${String(error)}`,
        );
      },
    );
  await Promise.race([claimed.promise, stored]);
  return {
    sink: async (result) => {
      abandoned = result === undefined;
      executed.resolve(result);
      await stored;
    },
  };
}

/** The kept result; a free record means it was never completed. */
async function readResult(
  executor: ProtectedCallExecutor,
  route: ProtectedRoute,
  keyContext: KeyContext,
  id: string,
): Promise<ExecutedResult> {
  const { value } = await executor.executeValue({
    route: executedResultRoute(route),
    keyContext: withExecutedResultId(keyContext, id),
    run: () => Promise.reject(resultUnavailableError(route.name)),
  });
  if (!isExecutedResult(value)) throw resultUnavailableError(route.name);
  return value;
}

function isKeptCall(value: unknown): value is KeptCall {
  const kept = value as Partial<KeptCall> | undefined;
  return typeof kept?.graphqlSelection === 'string' && typeof kept.executedResult === 'string';
}

function isExecutedResult(value: unknown): value is ExecutedResult {
  const result = value as Partial<ExecutedResult> | null | undefined;
  return Array.isArray(result?.path) && Array.isArray(result.errors);
}

function untilAborted(signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(undefined);
    else signal.addEventListener('abort', () => resolve(undefined), { once: true });
  });
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  readonly resolve: (value: T) => void;
  readonly reject: (error: unknown) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((fulfil, fail) => {
    resolve = fulfil;
    reject = fail;
  });
  return { promise, resolve, reject };
}
