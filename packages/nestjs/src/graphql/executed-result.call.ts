import { Logger } from '@nestjs/common';
import type { ProtectedCallExecutor, ProtectedRoute } from '@oncely/core/adapter';
import type { KeyContext } from '@oncely/core';
import { randomUUID } from 'node:crypto';
import type { TransportCall } from '../call/protected-call.interception.js';
import {
  executedResultCaptureOf,
  type ExecutedResult,
  type ExecutedResultSink,
} from './executed-result.capture.js';
import { executedResultRoute, withExecutedResultId } from './executed-result.route.js';
import { responsePathOf, type FieldInfo } from './graphql-info.types.js';
import { replayedValue } from './kept-selection.replay.js';
import {
  resultCaptureMissingError,
  resultUnavailableError,
  selectionMismatchError,
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
 */
export async function runKeepingExecutedResult(call: TransportCall): Promise<unknown> {
  const { executor, route, keyContext, context, run } = call;
  const [, , contextValue, info] = context.getArgs<[unknown, unknown, unknown, FieldInfo]>();
  const capture = executedResultCaptureOf(contextValue);
  if (!capture) throw resultCaptureMissingError(route.name);
  const selection = selectionFingerprint(info);
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
  const path = responsePathOf(info.path);
  if (own.result) {
    capture.keep(path, own.result.sink);
    return own.value;
  }
  if (!isKeptCall(kept)) throw resultUnavailableError(route.name);
  if (kept.graphqlSelection !== selection) throw selectionMismatchError(route.name);
  const result = await readResult(executor, route, keyContext, kept.executedResult);
  capture.replay(path, result);
  return replayedValue(result.data, info.returnType, info.schema);
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
  return (
    typeof value === 'object' && value !== null && Array.isArray((value as ExecutedResult).errors)
  );
}

function untilAborted(signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(undefined);
    else signal.addEventListener('abort', () => resolve(undefined), { once: true });
  });
}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}
