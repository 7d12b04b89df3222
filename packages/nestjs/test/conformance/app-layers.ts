import {
  Catch,
  HttpException,
  HttpStatus,
  Injectable,
  RequestTimeoutException,
  type ArgumentsHost,
  type CallHandler,
  type CanActivate,
  type ExceptionFilter,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ConformanceProbe } from '@oncely/core/testing';
import { Exclude, Expose } from 'class-transformer';
import { TimeoutError, catchError, throwError, timeout, type Observable } from 'rxjs';

interface AuthRequest {
  url: string;
  headers: Record<string, string | undefined>;
  user?: unknown;
  principal?: unknown;
}

function parsed(header: string | undefined): unknown {
  if (header === undefined) return undefined;
  try {
    return JSON.parse(header);
  } catch {
    return undefined;
  }
}

/**
 * The fixture's auth layer (a global guard, so it runs before oncely's interceptor): the
 * principal from `x-principal` (JSON) or `x-tenant`, and another one on `request.principal`.
 */
@Injectable()
export class ConformanceAuthGuard implements CanActivate {
  constructor(private readonly probe: ConformanceProbe) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthRequest>();
    this.probe.arrive(request.url.split('?')[0] ?? request.url);
    const { headers } = request;
    if (headers['x-principal'] !== undefined) request.user = parsed(headers['x-principal']);
    else if (headers['x-tenant'] !== undefined) request.user = { tenantId: headers['x-tenant'] };
    request.principal = parsed(headers['x-alt-principal']);
    return true;
  }
}

/** A user as an ORM would return it: the serializer must drop the hash and add the getter. */
export class UserView {
  id!: string;
  name!: string;
  @Exclude() passwordHash!: string;

  constructor(fields: Pick<UserView, 'id' | 'name' | 'passwordHash'>) {
    Object.assign(this, fields);
  }

  @Expose()
  get displayName(): string {
    return `${this.name} (${this.id.slice(0, 4)})`;
  }
}

/** The NestJS docs' timeout interceptor, at the fixture contract's 0.8 s. */
@Injectable()
export class TimeoutInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      timeout(800),
      catchError((err: unknown) =>
        throwError(() => (err instanceof TimeoutError ? new RequestTimeoutException() : err)),
      ),
    );
  }
}

/**
 * The NestJS docs' catch-all `AllExceptionsFilter`, answering an `HttpException` with its own
 * response, anything else with 500. Sending the problem as an object keeps its Content-Type on
 * Nest 12 only; docs/http.md shows the way that works on every major (the compat apps run it).
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(private readonly httpAdapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const { httpAdapter } = this.httpAdapterHost;
    const ctx = host.switchToHttp();
    const status =
      exception instanceof HttpException ? exception.getStatus() : HttpStatus.INTERNAL_SERVER_ERROR;
    const body =
      exception instanceof HttpException
        ? exception.getResponse()
        : { statusCode: status, message: 'Internal server error' };
    const problem =
      typeof body === 'object' && typeof (body as { type?: unknown }).type === 'string';
    if (problem) {
      httpAdapter.setHeader(ctx.getResponse(), 'content-type', 'application/problem+json');
    }
    httpAdapter.reply(ctx.getResponse(), body, status);
  }
}
