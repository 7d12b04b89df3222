import { HttpException, type ExecutionContext } from '@nestjs/common';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { SharedFlightError, toProblemResponse } from '@oncely/core';
import type { HttpResponse } from '@oncely/core/adapter';
import { OncelyResponseException } from './oncely-response.exception.js';

/**
 * oncely errors as problem+json (its headers, `Retry-After` above all, set on the response
 * first, so they survive an app's catch-all exception filter); a shared deterministic failure
 * as the leader's exception; anything else as it is.
 */
export function toHttpError(
  adapter: AbstractHttpAdapter,
  context: ExecutionContext,
  error: unknown,
): unknown {
  if (error instanceof SharedFlightError) {
    return new HttpException(error.body ?? error.message, error.status);
  }
  const problem = toProblemResponse(error);
  if (!problem) return error;
  const response: unknown = context.switchToHttp().getResponse();
  for (const [name, value] of Object.entries(problem.headers)) {
    if (name !== 'content-type') adapter.setHeader(response, name, value);
  }
  return new OncelyResponseException({
    status: problem.status,
    headers: problem.headers,
    body: { kind: 'json', value: problem.body },
  });
}

/** What the client gets when keeping its response failed after the app wrote it. */
export function problemResponseOf(error: unknown): HttpResponse {
  const problem = toProblemResponse(error);
  if (problem) {
    return {
      status: problem.status,
      headers: problem.headers,
      body: { kind: 'json', value: problem.body },
    };
  }
  return {
    status: 500,
    headers: { 'content-type': 'application/problem+json' },
    body: {
      kind: 'json',
      value: { type: 'about:blank', title: 'Internal Server Error', status: 500 },
    },
  };
}
