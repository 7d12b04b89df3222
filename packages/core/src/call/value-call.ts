import type { KeyContext } from '../key/key.types.js';
import type { HandlerContext } from './protected-call.types.js';
import type { ProtectedRoute } from './protected-route.js';

/**
 * A protected call whose handler returns a value rather than an HTTP response: a message
 * handler, a GraphQL resolver, a provider method. Throwing is how such a handler fails.
 */
export interface ValueCall {
  readonly route: ProtectedRoute;
  /**
   * What the keys are built from (arguments, payload, headers). A call whose keys cannot be built
   * is refused with an oncely event (`refused`), since no client sees a message's or a job's error.
   */
  readonly keyContext: KeyContext;
  /** Runs the handler; its value must be one `storedBodyOf` keeps (JSON, bytes or nothing). */
  readonly run: (context: HandlerContext) => Promise<unknown>;
}

export interface ValueCallResult {
  /**
   * The handler's value as kept: `undefined` for `undefined` or `null`, a `Buffer` for bytes,
   * the value itself otherwise; for a replay, the kept value.
   */
  readonly value: unknown;
  readonly replayed: boolean;
}

/**
 * The status a value call's record is kept under. The record format is that of a response; no
 * caller of `executeValue` ever sees it.
 */
export const VALUE_CALL_STATUS = 200;
