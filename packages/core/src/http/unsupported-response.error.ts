import { OncelyError } from '../errors/oncely-error.js';

/** A protected handler produced a response oncely cannot keep or share (a stream, a file). */
export class UnsupportedResponseError extends OncelyError {
  readonly code = 'unsupported_response';

  constructor(
    readonly route: string,
    readonly kind: string,
  ) {
    super(
      `${route} returned ${kind}, which oncely cannot store or replay. Return a JSON value or a Buffer, or take this route out of oncely's protection (its @IdempotentKey/@SingleFlight decorators, or its oncely middleware) and store the file elsewhere, returning its id.`,
    );
  }
}
