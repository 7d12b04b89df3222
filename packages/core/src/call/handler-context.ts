import type { HandlerContext } from './protected-call.types.js';

/** A signal that never aborts: what a call without an outer lease hands down. */
export const neverAborted: AbortSignal = new AbortController().signal;

/** The outer signal of a call no guard flight or record encloses. */
export const noOuterSignal = (): AbortSignal => neverAborted;

/**
 * A `HandlerContext` whose `signal` is made on first read. Most handlers never read it, and
 * making one (an `AbortController`, or `AbortSignal.any` over two) costs more than the rest of
 * the bookkeeping of a call.
 */
export function handlerContext(
  signalOf: () => AbortSignal,
  transaction: unknown = undefined,
): HandlerContext {
  return new LazySignalContext(signalOf, transaction);
}

class LazySignalContext implements HandlerContext {
  readonly #signalOf: () => AbortSignal;
  #signal: AbortSignal | undefined;
  declare readonly transaction?: unknown;

  constructor(signalOf: () => AbortSignal, transaction: unknown) {
    this.#signalOf = signalOf;
    // Only a transactional call has the property at all, as `HandlerContext` documents.
    if (transaction !== undefined) (this as { transaction?: unknown }).transaction = transaction;
  }

  get signal(): AbortSignal {
    return (this.#signal ??= this.#signalOf());
  }
}
