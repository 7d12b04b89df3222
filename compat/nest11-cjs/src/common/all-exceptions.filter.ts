import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { OncelyExceptionFilter, OncelyResponseException } from '@oncely/nestjs';

/**
 * The NestJS docs' catch-everything filter, bound with `app.useGlobalFilters()`, so Nest asks it
 * before oncely's own filter: it passes oncely's responses (problem+json errors with their
 * `Retry-After`) on to that filter, and answers every other error with its own envelope.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly oncely: OncelyExceptionFilter;

  constructor(private readonly httpAdapterHost: HttpAdapterHost) {
    this.oncely = new OncelyExceptionFilter(httpAdapterHost);
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    if (exception instanceof OncelyResponseException) {
      this.oncely.catch(exception, host);
      return;
    }
    const { httpAdapter } = this.httpAdapterHost;
    const ctx = host.switchToHttp();
    const httpStatus =
      exception instanceof HttpException ? exception.getStatus() : HttpStatus.INTERNAL_SERVER_ERROR;
    const responseBody = {
      statusCode: httpStatus,
      timestamp: new Date().toISOString(),
      path: httpAdapter.getRequestUrl(ctx.getRequest()),
    };
    httpAdapter.reply(ctx.getResponse(), responseBody, httpStatus);
  }
}
