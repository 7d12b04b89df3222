import {
  HttpException,
  Inject,
  Injectable,
  Optional,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import {
  ResponseCapture,
  SharedFlightError,
  resolveCallKeys,
  storedBodyValue,
  toProblemResponse,
  type HandlerContext,
  type HttpResponse,
  type KeyContext,
  type ProtectedCallResult,
} from '@oncely/core';
import type { ServerResponse } from 'node:http';
import { Observable, lastValueFrom, type Subscriber } from 'rxjs';
import { HandlerSettlement, type HandlerOutcome } from './handler-settlement.interceptor.js';
import { validateBody } from './body-validation.js';
import { detachedResponseOf, refuseUnkeptValue } from './detached-response.js';
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

/**
 * The one global interceptor of oncely. Routes without `@IdempotentKey`/`@SingleFlight` pass
 * straight through. For the others, in order: validate and transform the body DTO, build the keys
 * from the request context (the module's `keyContext` option changes where it comes from), then
 * let the executor decide (run, share, replay, refuse).
 *
 * What is kept is what the client receives: the handler's value leaves through every outer
 * interceptor, serializer and the platform's own send, and is caught on the Node response just
 * before it reaches the socket (real status, headers, body bytes); it is sent only once the
 * record holds it. Replays are written over whatever the app would send, byte for byte. The key
 * stays held until the handler itself settles, whatever an outer layer gives up on.
 */
@Injectable()
export class OncelyInterceptor implements NestInterceptor {
  constructor(
    @Inject(ONCELY_RUNTIME) private readonly runtime: OncelyRuntime,
    private readonly routes: OncelyRouteRegistry,
    private readonly adapterHost: HttpAdapterHost,
    @Optional() private readonly handlers?: OncelyHandlerExplorer,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const type = context.getType<string>();
    if (type === 'rpc' || type === 'graphql') {
      const handler = this.handlers?.get(context.getHandler());
      if (!handler) return next.handle();
      return interceptProtectedHandler(this.runtime.executor, handler, context, next);
    }
    const entry = type === 'http' ? this.routes.get(context.getHandler()) : undefined;
    if (!entry) return next.handle();
    const request = context.switchToHttp().getRequest<PlatformRequest>();
    let keys: ReturnType<typeof resolveCallKeys>;
    try {
      if (entry.bodyType && this.runtime.validation !== false) {
        request.body = await validateBody(entry.bodyType, request.body, this.runtime.validation);
      }
      keys = resolveCallKeys(entry.route, await this.resolveKeyContext(context));
    } catch (error) {
      throw this.toHttpError(context, error);
    }
    return new Observable((subscriber) => this.protect(context, next, entry, keys, subscriber));
  }

  /** The request context keys are built from; `body` is the validated DTO at this point. */
  private async resolveKeyContext(context: ExecutionContext): Promise<KeyContext> {
    const request = context.switchToHttp().getRequest<PlatformRequest>();
    const base: KeyContext = {
      body: request.body,
      params: request.params,
      query: request.query,
      headers: request.headers,
      user: request.user,
    };
    return this.runtime.keyContext ? this.runtime.keyContext(context, base) : base;
  }

  /**
   * Runs one protected call for `subscriber`, the rest of Nest's pipeline. The subscription may
   * be dropped by an outer operator (a timeout); the call goes on under its lease regardless.
   */
  private protect(
    context: ExecutionContext,
    next: CallHandler,
    entry: OncelyRouteEntry,
    keys: ReturnType<typeof resolveCallKeys>,
    subscriber: Subscriber<unknown>,
  ): void {
    const capture = new ResponseCapture(nodeResponseOf(context), {
      route: entry.route.name,
      maxBytes: maxResponseBytesOf(entry),
    });
    const call = new NestCall(subscriber);
    this.runtime.executor
      .execute({
        route: entry.route,
        keys,
        handler: (handlerContext) =>
          this.runHandler(context, next, entry, handlerContext, call, capture),
      })
      .then(
        (result) => this.deliver(capture, result, call),
        (error: unknown) => {
          if (call.emitted) capture.replaceWith(problemResponseOf(error));
          else call.settleFailure(error, (cause) => this.toHttpError(context, cause));
        },
      );
  }

  /**
   * Runs the route (inner interceptors, pipes, handler) and resolves with the response to keep
   * once the handler itself has settled: what the app sent, caught on the wire, or, when a layer
   * answered the client before the handler was done, the handler's value on its own.
   */
  private async runHandler(
    context: ExecutionContext,
    next: CallHandler,
    entry: OncelyRouteEntry,
    handlerContext: HandlerContext,
    call: NestCall,
    capture: ResponseCapture,
  ): Promise<HttpResponse> {
    const request = context.switchToHttp().getRequest<PlatformRequest>();
    if (handlerContext.transaction !== undefined) {
      request[ONCELY_TRANSACTION] = handlerContext.transaction;
    }
    const settlement = HandlerSettlement.open(request);
    const routed = await outcomeOf(next.handle());
    if (routed.kind === 'error' && settlement.entered && settlement.outcome === undefined) {
      // An inner layer gave up on a handler still running (a timeout): the client gets its
      // error now; the key stays held until the handler is done.
      call.fail(this.toHttpError(context, routed.error));
    }
    // Without the handler (an inner interceptor answered alone), what the route made is its own.
    const own = settlement.entered ? await settlement.settled : routed;
    if (own.kind === 'error') throw call.handlerFailed(own.error, routed);
    refuseUnkeptValue(own.value, entry.route.name);
    if (routed.kind === 'error' || call.closed) return detachedResponseOf(own.value, entry);
    const sent = capture.hold();
    call.emit(routed.value);
    return sent;
  }

  /**
   * The handler's own response goes out as the app wrote it; anything else (a replay, the result
   * a SingleFlight leader shared) is written over what the app sends for the value emitted here.
   */
  private deliver(capture: ResponseCapture, result: ProtectedCallResult, call: NestCall): void {
    if (!result.replayed && call.emitted) {
      capture.commit();
      return;
    }
    if (call.closed) return;
    capture.replaceWith(result.response);
    call.emit(storedBodyValue(result.response.body));
  }

  /**
   * oncely errors as problem+json (its headers, `Retry-After` above all, set on the response
   * first, so they survive an app's catch-all exception filter); a shared deterministic failure
   * as the leader's exception; anything else as it is.
   */
  private toHttpError(context: ExecutionContext, error: unknown): unknown {
    if (error instanceof SharedFlightError) {
      return new HttpException(error.body ?? error.message, error.status);
    }
    const problem = toProblemResponse(error);
    if (!problem) return error;
    const adapter = this.adapterHost.httpAdapter;
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
}

/** The rest of Nest's pipeline for one protected request, answered once. */
class NestCall {
  emitted = false;
  #failed = false;
  #handlerError: unknown;
  #routed: HandlerOutcome | undefined;

  constructor(private readonly subscriber: Subscriber<unknown>) {}

  /** Whether nothing more can reach the client through Nest (answered, or dropped outside). */
  get closed(): boolean {
    return this.emitted || this.#failed || this.subscriber.closed;
  }

  emit(value: unknown): void {
    if (this.closed) return;
    this.emitted = true;
    this.subscriber.next(value);
    this.subscriber.complete();
  }

  fail(error: unknown): void {
    if (this.closed) return;
    this.#failed = true;
    this.subscriber.error(error);
  }

  /** Notes that the handler threw (not kept), and what the inner layers made of it. */
  handlerFailed(error: unknown, routed: HandlerOutcome): unknown {
    this.#handlerError = error;
    this.#routed = routed;
    return error;
  }

  /**
   * Answers a call the executor ended in error. When that is the handler's own error, the client
   * gets what the inner layers made of it (an inner `catchError` fallback value included).
   */
  settleFailure(error: unknown, toHttpError: (error: unknown) => unknown): void {
    const routed = error === this.#handlerError ? this.#routed : undefined;
    if (routed?.kind === 'value') this.emit(routed.value);
    else this.fail(toHttpError(routed?.kind === 'error' ? routed.error : error));
  }
}

/** Subscribes once and reports how the observable ended, never throwing. */
function outcomeOf(observable: Observable<unknown>): Promise<HandlerOutcome> {
  return lastValueFrom(observable, { defaultValue: undefined }).then(
    (value) => ({ kind: 'value', value }),
    (error: unknown) => ({ kind: 'error', error }),
  );
}

/** The Node response under the platform's: Express's `res` is one, Fastify's reply wraps one. */
function nodeResponseOf(context: ExecutionContext): ServerResponse {
  const response = context.switchToHttp().getResponse<ServerResponse | { raw: ServerResponse }>();
  return 'raw' in response ? response.raw : response;
}

function maxResponseBytesOf(entry: OncelyRouteEntry): number {
  const { idempotent, singleFlight } = entry.route;
  return Math.max(idempotent?.maxResponseBytes ?? 0, singleFlight?.maxResponseBytes ?? 0);
}

/** What the client gets when keeping its response failed after the app wrote it. */
function problemResponseOf(error: unknown): HttpResponse {
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
