import { ProblemType, toProblemResponse } from '@oncely/core';

/**
 * What a message or GraphQL client sees of an oncely refusal: a stable upper-case `code`
 * derived from the problem `type` (`urn:oncely:problem:request-in-flight` →
 * `ONCELY_REQUEST_IN_FLIGHT`), the reason, and ids or field names only, never raw input.
 */
export interface OncelyCallErrorPayload {
  /** One of `OncelyCallErrorCode`: what clients switch on. */
  readonly code: string;
  /** The reason, with how to fix it where the client can (the problem's `detail`). */
  readonly message: string;
  /** The HTTP status the same refusal gets over HTTP, for clients that map codes to retries. */
  readonly status: number;
  /** When a retry may succeed, for refusals that say so (a key in flight, a quota). */
  readonly retryAfterMs?: number;
  /** The problem's extension members (`field`, `limit`, …). */
  readonly [extension: string]: unknown;
}

const PROBLEM_PREFIX = 'urn:oncely:problem:';

/** `urn:oncely:problem:request-in-flight` → `ONCELY_REQUEST_IN_FLIGHT`. */
function callErrorCodeOf(type: string): string {
  return `ONCELY_${type.slice(PROBLEM_PREFIX.length).replaceAll('-', '_').toUpperCase()}`;
}

/**
 * Stable codes clients of non-HTTP handlers may switch on: one per problem type, derived from
 * core's `ProblemType` table, so a new problem type has its code at once.
 */
export const OncelyCallErrorCode = Object.freeze(
  Object.fromEntries(
    Object.entries(ProblemType).map(([name, type]) => [name, callErrorCodeOf(type)]),
  ),
) as Readonly<Record<keyof typeof ProblemType, string>>;

/** The client-facing payload of an oncely error, or `undefined` for any other error. */
export function callErrorPayloadOf(error: unknown): OncelyCallErrorPayload | undefined {
  const problem = toProblemResponse(error);
  if (!problem) return undefined;
  const { type, title: _title, status, detail, ...extensions } = problem.body;
  const retryAfterMs = (error as { retryAfterMs?: unknown; leaseRemainingMs?: unknown })
    .retryAfterMs;
  return {
    ...extensions,
    code: callErrorCodeOf(type),
    message: detail,
    status,
    ...(typeof retryAfterMs === 'number' && { retryAfterMs }),
  };
}
