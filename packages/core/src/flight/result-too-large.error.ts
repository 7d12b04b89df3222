import { OncelyError } from '../errors/oncely-error.js';

/** A flight's result (or shared error) is above `maxResultBytes` once serialised. */
export class ResultTooLargeError extends OncelyError {
  readonly code = 'result_too_large';

  constructor(
    /** Size of the serialised result, in UTF-8 bytes. */
    readonly sizeBytes: number,
    /** The engine's `maxResultBytes`. */
    readonly maxBytes: number,
  ) {
    super(
      `The flight result is ${sizeBytes} bytes once serialised, above maxResultBytes (${maxBytes}). Raise maxResultBytes, or return something smaller such as a reference to content stored elsewhere.`,
    );
  }
}
