import { OncelyError } from '../errors/oncely-error.js';

/** A flight's result (or shared error) is above `maxResultBytes` once serialised. */
export class ResultTooLargeError extends OncelyError {
  readonly code = 'result_too_large';

  constructor(
    readonly sizeBytes: number,
    readonly maxBytes: number,
  ) {
    super(
      `The flight result is ${sizeBytes} bytes once serialised, above maxResultBytes (${maxBytes}). Raise maxResultBytes, or return something smaller such as a reference to content stored elsewhere.`,
    );
  }
}
