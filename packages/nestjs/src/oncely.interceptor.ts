import {
  HttpException,
  Inject,
  Injectable,
  Optional,
  StreamableFile,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import {
  SharedFlightError,
  UnsupportedResponseError,
  headerFields,
  resolveCallKeys,
  storedBodyValue,
  toProblemResponse,
  type HandlerContext,
  type HttpResponse,
  type KeyContext,
  type ProtectedCallResult,
  type StoredBody,
} from '@oncely/core';
import { Readable } from 'node:stream';
import { lastValueFrom, of, type Observable } from 'rxjs';
import { validateBody } from './body-validation.js';
import { ONCELY_RUNTIME, ONCELY_TRANSACTION } from './oncely.constants.js';
import type { OncelyRuntime } from './oncely.runtime.js';
import { OncelyResponseException } from './oncely-response.exception.js';
import { OncelyRouteRegistry, type OncelyRouteEntry } from './oncely-route.registry.js';
import { OncelyHandlerExplorer } from './oncely-handler.explorer.js';
import { interceptProtectedHandler } from './oncely-handler.interception.js';

type PlatformRequest = Record<string | symbol, unknown> & {
  body?: unknown;
  params?: unknown;
  query?: unknown;
  headers?: unknown;
  user?: unknown;
};

interface PlatformResponse {
  getHeaders(): Record<string, unknown>;
}

/**
 * The one global interceptor of oncely. Routes without `@IdempotentKey`/`@SingleFlight` pass
 * straight through. For the others, in order: validate and transform the body DTO, build the keys
 * from the request context, then let the executor decide (run, share, replay, refuse). Errors
 * become problem+json through `OncelyExceptionFilter`. Subclass it and override the `protected`
 * hooks to change how the principal or the key context is found, or how responses are built.
 */
@Injectable()
export class OncelyInterceptor implements NestInterceptor {
  constructor(
    @Inject(ONCELY_RUNTIME) protected readonly runtime: OncelyRuntime,
    protected readonly routes: OncelyRouteRegistry,
    protected readonly adapterHost: HttpAdapterHost,
  ) {}

  /** Message handlers and resolvers; property-injected so subclasses keep their constructor. */
  @Optional()
  @Inject(OncelyHandlerExplorer)
  protected readonly handlers?: OncelyHandlerExplorer;

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const type = context.getType<string>();
    if (type === 'rpc' || type === 'graphql') {
      const handler = this.handlers?.get(context.getHandler());
      if (!handler) return next.handle();
      return interceptProtectedHandler(this.runtime.executor, handler, context, next);
    }
    const entry = context.getType() === 'http' ? this.routes.get(context.getHandler()) : undefined;
    if (!entry) return next.handle();
    try {
      const request = context.switchToHttp().getRequest<PlatformRequest>();
      if (entry.bodyType && this.runtime.validation !== false) {
        request.body = await validateBody(entry.bodyType, request.body, this.runtime.validation);
      }
      const keys = resolveCallKeys(entry.route, await this.resolveKeyContext(context));
      const result = await this.runtime.executor.execute({
        route: entry.route,
        keys,
        handler: (handlerContext) => this.runHandler(context, next, entry, handlerContext),
      });
      return of(this.respond(context, entry, result));
    } catch (error) {
      throw this.toHttpError(error);
    }
  }

  /** The principal keys may read as `user.*`; by default what auth guards leave on the request. */
  protected resolveUser(context: ExecutionContext): unknown {
    return context.switchToHttp().getRequest<PlatformRequest>().user;
  }

  /** The request context keys are built from; `body` is the validated DTO at this point. */
  protected async resolveKeyContext(context: ExecutionContext): Promise<KeyContext> {
    const request = context.switchToHttp().getRequest<PlatformRequest>();
    return {
      body: request.body,
      params: request.params,
      query: request.query,
      headers: request.headers,
      user: await this.resolveUser(context),
    };
  }

  /** Runs the route handler (pipes included) and reports its response to the executor. */
  protected async runHandler(
    context: ExecutionContext,
    next: CallHandler,
    entry: OncelyRouteEntry,
    handlerContext: HandlerContext,
  ): Promise<HttpResponse> {
    const request = context.switchToHttp().getRequest<PlatformRequest>();
    if (handlerContext.transaction !== undefined) {
      request[ONCELY_TRANSACTION] = handlerContext.transaction;
    }
    const value: unknown = await lastValueFrom(next.handle(), { defaultValue: undefined });
    return this.toHttpResponse(context, entry, value);
  }

  /** What the handler answered, as oncely keeps it; streams and files are refused. */
  protected toHttpResponse(
    context: ExecutionContext,
    entry: OncelyRouteEntry,
    value: unknown,
  ): HttpResponse {
    const response = context.switchToHttp().getResponse<PlatformResponse>();
    return {
      status: entry.statusCode,
      headers: headerFields(response.getHeaders()),
      body: storedBodyOf(value, entry.route.name),
    };
  }

  /**
   * The value Nest sends. A fresh response is the handler's own value; a replay gets its kept
   * headers (with `Idempotent-Replayed: true`) set here, and goes through the exception filter
   * only if its status differs from the route's.
   */
  protected respond(
    context: ExecutionContext,
    entry: OncelyRouteEntry,
    result: ProtectedCallResult,
  ): unknown {
    const { response } = result;
    if (result.replayed) {
      if (response.status !== entry.statusCode) throw new OncelyResponseException(response);
      const adapter = this.adapterHost.httpAdapter;
      const platformResponse: unknown = context.switchToHttp().getResponse();
      for (const [name, value] of Object.entries(response.headers)) {
        adapter.setHeader(platformResponse, name, value);
      }
    }
    return storedBodyValue(response.body);
  }

  /** oncely errors as problem+json; a shared deterministic failure as the leader's exception. */
  protected toHttpError(error: unknown): unknown {
    if (error instanceof SharedFlightError) {
      return new HttpException(error.body ?? error.message, error.status);
    }
    const problem = toProblemResponse(error);
    if (!problem) return error;
    return new OncelyResponseException({
      status: problem.status,
      headers: problem.headers,
      body: { kind: 'json', value: problem.body },
    });
  }
}

function storedBodyOf(value: unknown, route: string): StoredBody {
  if (value === undefined || value === null) return { kind: 'empty' };
  // Plain data first: the first touch of the ReadableStream/Response globals loads Node's fetch
  // implementation (~90 ms), which no ordinary JSON response should pay for.
  if (typeof value !== 'object' || isPlainData(value)) return { kind: 'json', value };
  if (value instanceof StreamableFile)
    throw new UnsupportedResponseError(route, 'a StreamableFile');
  if (value instanceof Readable) throw new UnsupportedResponseError(route, 'a Readable stream');
  if (value instanceof ReadableStream)
    throw new UnsupportedResponseError(route, 'a ReadableStream');
  if (value instanceof Response) throw new UnsupportedResponseError(route, 'a web Response');
  if (value instanceof Uint8Array) return { kind: 'bytes', value };
  return { kind: 'json', value };
}

function isPlainData(value: object): boolean {
  if (Array.isArray(value)) return true;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
