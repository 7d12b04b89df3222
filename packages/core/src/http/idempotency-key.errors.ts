import { OncelyError } from '../errors/oncely-error.js';

/** The route requires an `Idempotency-Key` header and the request has none. */
export class IdempotencyKeyMissingError extends OncelyError {
  readonly code = 'idempotency_key_missing';

  constructor(
    /** The header the route reads the key from, lower case. */
    readonly header: string,
  ) {
    super(
      `This operation requires the "${header}" header. Send a unique key per logical operation (for example a UUID) and reuse it on every retry of that operation.`,
    );
  }
}

/** The `Idempotency-Key` header is present but not a valid key. */
export class IdempotencyKeyMalformedError extends OncelyError {
  readonly code = 'idempotency_key_malformed';

  constructor(
    /** The header the route reads the key from, lower case. */
    readonly header: string,
    /** What is wrong with its value; never the value itself. */
    readonly reason: string,
  ) {
    super(
      `The "${header}" header is malformed: ${reason}. Send 1 to 255 printable ASCII characters, as a token or a quoted string.`,
    );
  }
}
