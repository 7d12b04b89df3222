import { OncelyError } from '../errors/oncely-error.js';

/** A protected handler produced a response oncely cannot keep or share (a stream, a file). */
export class UnsupportedResponseError extends OncelyError {
  readonly code = 'unsupported_response';

  constructor(
    /** The route whose handler produced the response. */
    readonly route: string,
    /** What it returned, described without its content, e.g. "a StreamableFile". */
    readonly kind: string,
  ) {
    super(
      `${route} returned ${kind}, which oncely cannot store or replay. Return a JSON value or a Buffer, or take this route out of oncely's protection (its @IdempotentKey/@SingleFlight decorators, or its oncely middleware) and store the file elsewhere, returning its id.`,
    );
  }
}
