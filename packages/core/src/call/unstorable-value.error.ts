import { OncelyError } from '../errors/oncely-error.js';

/**
 * A protected call's handler returned a value oncely cannot keep as it is (a class instance, a
 * function, a symbol, `NaN`, a cycle...). The handler ran, so its effect happened: the record
 * keeps the refusal, and this call and every retry of its key get this error instead of running
 * the handler again. `path` points at the value, e.g. `$.items[2].price`.
 */
export class UnstorableValueError extends OncelyError {
  readonly code = 'unstorable_value';

  constructor(
    /** The route whose handler returned the value. */
    readonly route: string,
    /** Where the value sits in the result, e.g. `$.items[2].price`. */
    readonly path: string,
    /** Why it cannot be kept, e.g. "a class instance". */
    readonly reason: string,
  ) {
    super(
      `${route} returned a value oncely cannot keep, at ${path}: ${reason}. The handler ran once and every retry of this key gets this error until its record expires. Return JSON values, Date, Buffer/Uint8Array, bigint, Map or Set (e.g. a plain object instead of a class instance).`,
    );
  }
}
