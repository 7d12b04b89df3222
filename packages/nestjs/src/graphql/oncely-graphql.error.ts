import { OncelyError } from '@oncely/core';
import { callErrorPayloadOf, type OncelyCallErrorPayload } from '../call/call-error.js';

/**
 * An oncely refusal in a GraphQL resolver. graphql-js copies `extensions` of the original error
 * into the response, so clients read `errors[0].extensions.code` without oncely importing graphql.
 */
export class OncelyGraphQLError extends OncelyError {
  readonly code: string;
  readonly extensions: Readonly<Record<string, unknown>>;

  constructor(payload: OncelyCallErrorPayload, options?: ErrorOptions) {
    super(payload.message, options);
    const { message: _message, ...extensions } = payload;
    this.code = payload.code;
    this.extensions = extensions;
  }
}

/** oncely refusals as GraphQL errors with a stable `extensions.code`; others pass through. */
export function toGraphQLError(error: unknown): unknown {
  const payload = callErrorPayloadOf(error);
  return payload ? new OncelyGraphQLError(payload, { cause: error }) : error;
}
