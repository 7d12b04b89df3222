import type { HandlerContext } from './protected-call.executor.js';

/**
 * A `HandlerContext` whose `signal` is made on first read. Most handlers never read it, and
 * making one (an `AbortController`, or `AbortSignal.any` over two) costs more than the rest of
 * the bookkeeping of a call.
 */
export function handlerContext(
  signalOf: () => AbortSignal,
  transaction: unknown = undefined,
): HandlerContext {
  let signal: AbortSignal | undefined;
  return {
    get signal() {
      return (signal ??= signalOf());
    },
    ...(transaction !== undefined && { transaction }),
  };
}
