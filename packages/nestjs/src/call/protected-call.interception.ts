import type { CallHandler, ExecutionContext } from '@nestjs/common';
import type { KeyContext } from '@oncely/core';
import type { ProtectedCallExecutor, ProtectedRoute } from '@oncely/core/adapter';
import { lastValueFrom, of, type Observable } from 'rxjs';

/** One protected call as a transport may run it itself. */
export interface TransportCall {
  readonly executor: ProtectedCallExecutor;
  readonly route: ProtectedRoute;
  readonly keyContext: KeyContext;
  readonly context: ExecutionContext;
  /** Runs the handler and resolves with its value. */
  readonly run: () => Promise<unknown>;
}

/** How one kind of non-HTTP call (a message, a GraphQL operation) reads keys and reports refusals. */
export interface CallTransport {
  /** The key context of one call: its payload or arguments, headers, principal. */
  keyContext(context: ExecutionContext): KeyContext;
  /** oncely refusals as the transport's own error; any other error as it is. */
  toError(error: unknown): unknown;
  /**
   * Runs an idempotent call whose replay is not the handler's value (a GraphQL field replays the
   * response its first client received); without it, the handler's value is kept and replayed.
   */
  runIdempotent?(call: TransportCall): Promise<unknown>;
}

/**
 * One message handler or resolver call under oncely: keys from the payload, headers or
 * arguments; the handler runs once per key (a duplicate message is acknowledged with the kept
 * result, without running it again); refusals become the transport's error with a stable code.
 * A thrown handler error releases the record, so a redelivery runs again.
 */
export async function interceptProtectedCall(
  executor: ProtectedCallExecutor,
  route: ProtectedRoute,
  transport: CallTransport,
  context: ExecutionContext,
  next: CallHandler,
): Promise<Observable<unknown>> {
  try {
    const keyContext = transport.keyContext(context);
    const run = () => lastValueFrom(next.handle(), { defaultValue: undefined });
    if (route.idempotent && transport.runIdempotent) {
      return of(await transport.runIdempotent({ executor, route, keyContext, context, run }));
    }
    // The client receives the value as JSON, so a class instance is kept as it is sent.
    const { value } = await executor.executeValue({ route, keyContext, run, fidelity: 'json' });
    return of(value);
  } catch (error) {
    throw await transport.toError(error);
  }
}
