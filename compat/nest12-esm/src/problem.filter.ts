import {
  Catch,
  HttpException,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { Response } from 'express';
import { STATUS_CODES } from 'node:http';

interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail?: string;
}

/**
 * Every error leaves as RFC 9457 `application/problem+json`. oncely's errors are
 * `HttpException`s whose response is already a problem: it goes out as it is (oncely has set
 * `Retry-After` on the response before throwing). Other HTTP errors become `about:blank`
 * problems; anything unexpected a 500 that reveals no internals.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger(ProblemFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const problem = this.toProblem(exception);
    response.status(problem.status).type('application/problem+json').json(problem);
  }

  private toProblem(exception: unknown): Problem {
    if (!(exception instanceof HttpException)) {
      this.logger.error(exception instanceof Error ? exception.stack : String(exception));
      return { type: 'about:blank', title: 'Internal Server Error', status: 500 };
    }
    const status = exception.getStatus();
    const body = exception.getResponse();
    if (isProblem(body)) return body;
    const message = typeof body === 'object' ? (body as { message?: unknown }).message : body;
    return {
      type: 'about:blank',
      title: STATUS_CODES[status] ?? 'Error',
      status,
      detail: Array.isArray(message) ? message.join('; ') : String(message ?? exception.message),
    };
  }
}

function isProblem(body: unknown): body is Problem {
  if (typeof body !== 'object' || body === null) return false;
  const { type, title, status } = body as Partial<Problem>;
  return typeof type === 'string' && typeof title === 'string' && typeof status === 'number';
}
