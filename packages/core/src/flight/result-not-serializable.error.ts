import { OncelyError } from '../errors/oncely-error.js';

/**
 * A flight's result holds a value the codec cannot carry across processes without losing it
 * (a function, a `WeakMap`, `NaN`, a cycle...). `path` points at it, e.g. `$.items[2].price`.
 */
export class ResultNotSerializableError extends OncelyError {
  readonly code = 'result_not_serializable';

  constructor(
    /** Where the value sits in the result, e.g. `$.items[2].price`. */
    readonly path: string,
    /** Why the codec cannot carry it, e.g. "a function". */
    readonly reason: string,
  ) {
    super(
      `The flight result cannot be serialised at ${path}: ${reason}. Return JSON-compatible values, Buffer/Uint8Array, Date, bigint, Map or Set only.`,
    );
  }
}
