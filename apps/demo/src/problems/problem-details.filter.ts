import {
  Catch,
  HttpException,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { PROBLEM_CONTENT_TYPE, type ProblemDetails, type ProblemResponse } from '@oncely/core';
import { OncelyExceptionFilter, OncelyResponseException } from '@oncely/nestjs';
import type { Response } from 'express';
import { STATUS_CODES } from 'node:http';
import { ProblemException } from './problem.exception.js';

/**
 * Every error leaves the demo as `application/problem+json`. oncely's own responses (its
 * problems, replays) are written by oncely's filter, with their headers; the demo's
 * `ProblemException`s and problem bodies go out as they are; other HTTP errors become
 * `about:blank` problems; anything unexpected a 500 that reveals no internals.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Problems');
  private readonly oncely: OncelyExceptionFilter;

  constructor(adapterHost: HttpAdapterHost) {
    this.oncely = new OncelyExceptionFilter(adapterHost);
  }

  catch(error: unknown, host: ArgumentsHost): void {
    if (error instanceof OncelyResponseException) {
      this.oncely.catch(error, host);
      return;
    }
    const response = host.switchToHttp().getResponse<Response>();
    if (response.headersSent) {
      response.end();
      return;
    }
    const problem = this.toProblem(error);
    for (const [name, value] of Object.entries(problem.headers)) response.setHeader(name, value);
    response.setHeader('content-type', PROBLEM_CONTENT_TYPE);
    response.status(problem.status).send(JSON.stringify(problem.body));
  }

  private toProblem(error: unknown): ProblemResponse {
    if (error instanceof ProblemException) {
      return { status: error.problem.status, headers: error.headers, body: error.problem };
    }
    if (error instanceof HttpException) {
      const status = error.getStatus();
      const body = error.getResponse();
      if (isProblem(body)) return { status, headers: {}, body };
      const message: unknown =
        typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : body;
      return {
        status,
        headers: {},
        body: {
          type: 'about:blank',
          title: STATUS_CODES[status] ?? 'Error',
          status,
          detail: Array.isArray(message)
            ? message.join('; ')
            : typeof message === 'string'
              ? message
              : error.message,
        },
      };
    }
    this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    return {
      status: 500,
      headers: {},
      body: {
        type: 'about:blank',
        title: 'Internal Server Error',
        status: 500,
        detail: 'The server failed to process the request; it is safe to retry.',
      },
    };
  }
}

function isProblem(body: unknown): body is ProblemDetails {
  if (typeof body !== 'object' || body === null) return false;
  const { type, title, status } = body as Partial<ProblemDetails>;
  return typeof type === 'string' && typeof title === 'string' && typeof status === 'number';
}
