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

/** How a protected call ended, for a transport that settles its message itself. */
export type CallOutcome =
  /** The call has its value: the handler ran and its record is complete, or it was replayed. */
  | { readonly completed: true }
  /** The call was refused, or its handler threw (its record released). */
  | { readonly completed: false; readonly error: unknown };

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
  /**
   * Settles the call's message once its outcome is final (RabbitMQ with manual acknowledgement),
   * before the value or error goes back to the transport.
   */
  settle?(context: ExecutionContext, outcome: CallOutcome): void;
}

/**
 * One message handler or resolver call under oncely: keys from the payload, headers or
 * arguments; the handler runs once per key (a duplicate message is acknowledged with the kept
 * result, without running it again); refusals become the transport's error with a stable code.
 * A thrown handler error releases the record, so a redelivery runs again. A transport that
 * settles messages hears every outcome, the handler's value only once its record is complete.
 */
export async function interceptProtectedCall(
  executor: ProtectedCallExecutor,
  route: ProtectedRoute,
  transport: CallTransport,
  context: ExecutionContext,
  next: CallHandler,
): Promise<Observable<unknown>> {
  let value: unknown;
  try {
    value = await executeCall(executor, route, transport, context, next);
  } catch (error) {
    transport.settle?.(context, { completed: false, error });
    throw await transport.toError(error);
  }
  transport.settle?.(context, { completed: true });
  return of(value);
}

async function executeCall(
  executor: ProtectedCallExecutor,
  route: ProtectedRoute,
  transport: CallTransport,
  context: ExecutionContext,
  next: CallHandler,
): Promise<unknown> {
  const keyContext = transport.keyContext(context);
  const run = () => lastValueFrom(next.handle(), { defaultValue: undefined });
  if (route.idempotent && transport.runIdempotent) {
    return transport.runIdempotent({ executor, route, keyContext, context, run });
  }
  // The client receives the value as JSON, so a class instance is kept as it is sent.
  const { value } = await executor.executeValue({ route, keyContext, run, fidelity: 'json' });
  return value;
}
