import { OncelyError } from '../errors/oncely-error.js';

/** One property of the request body that failed validation, with the messages of its rules. */
export interface BodyViolation {
  /** Dotted path of the property (`items.0.sku`). */
  readonly property: string;
  /** What each failed rule says of it, as the validator wrote it. */
  readonly messages: readonly string[];
}

/** The request body failed validation; nothing was locked or recorded. */
export class InvalidBodyError extends OncelyError {
  readonly code = 'invalid_body';

  constructor(
    /** Every property that failed, sent to the client as the problem's `errors`. */
    readonly violations: readonly BodyViolation[],
  ) {
    super(
      `The request body is invalid (${violations.map((v) => v.property).join(', ') || 'no properties'}). Fix the listed properties and send the request again.`,
    );
  }
}

/**
 * The request has no authenticated principal where the key needs one. Thrown when the route (or
 * the module) says a missing user is a 401 rather than a 400.
 */
export class UnauthenticatedError extends OncelyError {
  readonly code = 'unauthenticated';

  constructor(
    /** The key field that needs the principal, e.g. `user.tenantId`. */
    readonly field: string,
    options?: ErrorOptions,
  ) {
    super(
      `This operation is scoped by "${field}", which comes from the authenticated principal, and the request has no principal with it. Authenticate (or run the authentication guard before oncely) and try again.`,
      options,
    );
  }
}

/** The request body or the response to keep is larger than the configured limit. */
export class PayloadTooLargeError extends OncelyError {
  readonly code = 'payload_too_large';

  constructor(
    /** Whether the client's body or the handler's response is too large. */
    readonly subject: 'request' | 'response',
    /** The limit applied (`maxBodyBytes` or `maxResponseBytes`). */
    readonly limitBytes: number,
    /** The size found, in bytes. */
    readonly actualBytes: number,
  ) {
    super(
      subject === 'request'
        ? `The request body is ${actualBytes} bytes; this operation accepts at most ${limitBytes}. Send a smaller body, or raise maxBodyBytes.`
        : `The response is ${actualBytes} bytes, above the ${limitBytes} bytes oncely keeps for replays; it was not confirmed. Return a smaller response (for example a resource id), or raise maxResponseBytes.`,
    );
  }
}
