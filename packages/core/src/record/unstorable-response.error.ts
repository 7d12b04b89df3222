import { OncelyError } from '../errors/oncely-error.js';

/** A response handed to `complete` cannot be stored losslessly, so it could not be replayed. */
export class UnstorableResponseError extends OncelyError {
  readonly code = 'unstorable_response';

  constructor(
    /** What in the response cannot be kept losslessly. */
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(
      `The response cannot be stored for replay: ${reason}. Return a JSON-serialisable body, send raw bytes as { kind: 'bytes' }, or { kind: 'empty' } for no body.`,
      options,
    );
  }
}
