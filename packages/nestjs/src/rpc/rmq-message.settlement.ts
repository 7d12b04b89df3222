import type { ExecutionContext } from '@nestjs/common';
import { OncelyConfigurationError, ProblemType, toProblemResponse } from '@oncely/core';
import type { CallOutcome } from '../call/protected-call.interception.js';

/** What `RmqContext` holds: the delivered message and the amqplib channel it came on. */
interface RmqTransportContext {
  getMessage(): unknown;
  getChannelRef(): RmqChannel;
}

/** The settlements of an amqplib `Channel`. */
interface RmqChannel {
  ack(message: unknown): void;
  nack(message: unknown, allUpTo: boolean, requeue: boolean): void;
  reject(message: unknown, requeue: boolean): void;
}

/**
 * Refusals a later delivery may get past: the key is still running elsewhere, a backend is down,
 * a bound is full. Every other refusal (a payload mismatch, a key that cannot be built, a record
 * of another service, a value that cannot be kept) gets the same answer on every delivery.
 */
const PASSING_PROBLEMS: ReadonlySet<string> = new Set([
  ProblemType.requestInFlight,
  ProblemType.coordinatorUnavailable,
  ProblemType.storeUnavailable,
  ProblemType.leaseLost,
  ProblemType.capacityExceeded,
  ProblemType.recordQuotaExceeded,
]);

/**
 * Settles a RabbitMQ message of a protected handler once its outcome is final, on a server with
 * manual acknowledgement (`noAck: false`): ack once the record is complete (run here or replayed),
 * so a consumer killed before the ack leaves a redelivery that replays; nack with requeue when a
 * later delivery may succeed (the key still in flight after the wait, a backend down, the handler
 * threw), so the message is not lost; reject without requeue (dead-letter) a refusal that every
 * delivery would get. A message of any other transport is left alone.
 */
export function settleRmqMessage(context: ExecutionContext, outcome: CallOutcome): void {
  const transport = context.switchToRpc().getContext<Partial<RmqTransportContext> | undefined>();
  if (typeof transport?.getChannelRef !== 'function' || typeof transport.getMessage !== 'function')
    return;
  const channel = transport.getChannelRef();
  const message = transport.getMessage();
  if (outcome.completed) channel.ack(message);
  else if (redeliveryMayPass(outcome.error)) channel.nack(message, false, true);
  else channel.reject(message, false);
}

function redeliveryMayPass(error: unknown): boolean {
  const problem = toProblemResponse(error);
  // Not an oncely refusal: the handler's own failure, and its record was released.
  if (!problem) return true;
  return PASSING_PROBLEMS.has(problem.body.type);
}

/**
 * Whether oncely settles RabbitMQ messages: the module's `rmq.noAck`, which repeats the
 * `noAck` of the app's `Transport.RMQ` server (Nest's default, `true`, settles nothing).
 */
export function settlesRmqMessages(owner: string, rmq: { readonly noAck?: unknown } = {}): boolean {
  const { noAck } = rmq;
  if (noAck === undefined) return false;
  if (typeof noAck !== 'boolean') {
    throw new OncelyConfigurationError(
      `${owner} option "rmq.noAck" must be true or false, the same as the noAck of the app's Transport.RMQ server; got ${typeof noAck}.`,
    );
  }
  return !noAck;
}
