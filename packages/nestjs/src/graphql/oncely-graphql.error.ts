import { OncelyError } from '@oncely/core';
import type { ProtectedRoute } from '@oncely/core/adapter';
import {
  callErrorPayloadOf,
  OncelyCallErrorCode,
  type OncelyCallErrorPayload,
} from '../call/call-error.js';

/**
 * An oncely refusal in a GraphQL resolver. graphql-js copies `extensions` of the original error
 * into the response, so clients read `errors[0].extensions.code` without oncely importing graphql.
 */
export class OncelyGraphQLError extends OncelyError {
  readonly code: string;
  /** The payload but its message (`code`, `status`, …), as clients read it in the response. */
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

/** Codes of the answers only an idempotent GraphQL field gives, next to `OncelyCallErrorCode`. */
export const OncelyGraphQLErrorCode = Object.freeze({
  /**
   * 422: a retry selected other fields than the first request, whose response is all that was
   * kept; retry with the first request's selection set, or send a new key for a new mutation.
   */
  selectionMismatch: 'ONCELY_SELECTION_MISMATCH',
  /**
   * 410: the mutation ran, but the response its first client received was not kept (the server
   * stopped before sending it, or an error elsewhere nulled it out of that response); it will
   * not run again under this key.
   */
  resultUnavailable: 'ONCELY_RESULT_UNAVAILABLE',
  /**
   * 500: the server does not keep GraphQL responses (`OncelyGraphQLPlugin` is not among its
   * Apollo plugins); nothing ran.
   */
  resultCaptureMissing: 'ONCELY_RESULT_CAPTURE_MISSING',
} as const);

export function selectionMismatchError(field: string): OncelyGraphQLError {
  return new OncelyGraphQLError({
    code: OncelyGraphQLErrorCode.selectionMismatch,
    status: 422,
    field,
    message: `This idempotency key was first used with another selection set on ${field}; only the response to that selection was kept. Retry with the same selection set (aliases included), or use a new key for a new mutation.`,
  });
}

export function resultUnavailableError(field: string): OncelyGraphQLError {
  return new OncelyGraphQLError({
    code: OncelyGraphQLErrorCode.resultUnavailable,
    status: 410,
    field,
    message: `${field} already ran under this idempotency key, but the response to it was not kept (the server stopped before sending it, or another field's error left no value of it in that response). It will not run again under this key: read the outcome with a query.`,
  });
}

export function resultCaptureMissingError(field: string): OncelyGraphQLError {
  return new OncelyGraphQLError({
    code: OncelyGraphQLErrorCode.resultCaptureMissing,
    status: 500,
    field,
    message: `${field} is idempotent, but the server does not keep GraphQL responses: add OncelyGraphQLPlugin to the GraphQL module (as a provider, or in plugins: [new OncelyGraphQLPlugin()]). Nothing ran.`,
  });
}

/**
 * A duplicate refused as in flight, told what fits its route: the core's refusal suggests
 * `onBusy: 'wait'`, which a route that has it already did, for its whole `wait`.
 */
export function withRouteBusyAdvice(route: ProtectedRoute, error: unknown): unknown {
  const idempotent = route.idempotent;
  const payload = callErrorPayloadOf(error);
  if (idempotent?.onBusy !== 'wait' || payload?.code !== OncelyCallErrorCode.requestInFlight) {
    return error;
  }
  return new OncelyGraphQLError(
    {
      ...payload,
      message: `${route.name} is still running under this idempotency key: this request waited ${idempotent.wait} ms (onBusy: 'wait', wait: ${idempotent.wait}) without receiving its outcome. Retry after extensions.retryAfterMs to receive it, or raise wait on the route if duplicates should wait longer.`,
    },
    { cause: error },
  );
}
