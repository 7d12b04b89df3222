import type { CallHandler, ExecutionContext } from '@nestjs/common';
import type { AbstractHttpAdapter } from '@nestjs/core';
import type { HandlerContext } from '@oncely/core';
import {
  ResponseCapture,
  answerAtNextSend,
  expressFreshness,
  httpCallKeys,
  replayedBodyValue,
  type CallKeys,
  type FreshnessCheck,
  type HttpKeyHooks,
  type HttpKeyRequest,
  type HttpResponse,
  type ProtectedCallResult,
} from '@oncely/core/adapter';
import type { ServerResponse } from 'node:http';
import { Observable, type Subscriber } from 'rxjs';
import {
  HandlerSettlement,
  deferProtection,
} from '../decorators/handler-settlement.interceptor.js';
import type { HttpRouteEntry } from '../discovery/protected-handler.entry.js';
import { ONCELY_TRANSACTION } from '../oncely.constants.js';
import type { OncelyRuntime } from '../oncely.runtime.js';
import { validateBody } from './body-validation.js';
import { detachedResponseOf, refuseFileResponse } from './detached-response.js';
import { problemResponseOf, toHttpError } from './http-error.js';
import { NestCall, outcomeOf } from './nest-call.js';

type PlatformRequest = Record<string | symbol, unknown> & HttpKeyRequest & { method?: string };

/**
 * One request to a protected HTTP route, in order: validate and transform the body DTO, build
 * the keys from the request context (the module's `keyContext` option changes where it comes
 * from), then let the executor decide (run, share, replay, refuse). A `HEAD` (Express and Fastify
 * both route it to the `GET` handler) is a read-only call; an `OPTIONS` passes straight through.
 *
 * What is kept is what the client receives: the handler's value leaves through every outer
 * interceptor, serializer and the platform's own send, and is caught on the Node response just
 * before it reaches the socket (real status, headers, body bytes); it is sent only once the
 * record holds it. A replay goes out at the platform's own send in place of whatever the app's
 * outer layers made of its value, byte for byte, with their headers. The key stays held until
 * the handler itself settles, whatever an outer layer gives up on. A route whose body its own
 * interceptor produces (multer's) runs all this from next to the handler.
 */
export class HttpRouteInterception {
  /** How the platform answers conditional requests, once its adapter is known. */
  #fresh: { readonly check: FreshnessCheck | undefined } | undefined;

  constructor(
    private readonly runtime: OncelyRuntime,
    private readonly adapter: () => AbstractHttpAdapter,
  ) {}

  async intercept(
    entry: HttpRouteEntry,
    context: ExecutionContext,
    next: CallHandler,
  ): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<PlatformRequest>();
    // A preflight (an `@All` route, CORS with `preflightContinue`) says nothing of the operation.
    if (request.method === 'OPTIONS') return next.handle();
    let keys: CallKeys;
    try {
      keys = await httpCallKeys(entry.route, request, this.keyHooksOf(entry, context));
    } catch (error) {
      throw this.toHttpError(context, error);
    }
    const readOnly = request.method === 'HEAD';
    return new Observable((subscriber) =>
      this.protect(context, next, entry, { keys, readOnly }, subscriber),
    );
  }

  /**
   * A route whose keys wait for its own interceptors (a multer upload): the protection runs from
   * `HandlerSettlementInterceptor`, next to the handler, once the body and files are parsed.
   */
  deferToHandler(
    entry: HttpRouteEntry,
    context: ExecutionContext,
    next: CallHandler,
  ): Observable<unknown> {
    deferProtection(context.switchToHttp().getRequest<object>(), (inner, handler) =>
      this.intercept(entry, inner, handler),
    );
    return next.handle();
  }

  /**
   * What Nest adds to the keys: the body DTO validated and transformed, the module's
   * `keyContext` option, and no unparsed-body check where the route's own interceptor parses it.
   */
  private keyHooksOf(entry: HttpRouteEntry, context: ExecutionContext): HttpKeyHooks {
    const { bodyType, keyAfterInterceptors: bodyParsed } = entry;
    const { validation, keyContext } = this.runtime;
    return {
      bodyParsed,
      validate:
        bodyType && validation !== false
          ? (body) => validateBody(bodyType, body, validation)
          : undefined,
      keyContext: keyContext && ((base) => keyContext(context, base)),
    };
  }

  /**
   * Runs one protected call for `subscriber`, the rest of Nest's pipeline. The subscription may
   * be dropped by an outer operator (a timeout); the call goes on under its lease regardless.
   */
  private protect(
    context: ExecutionContext,
    next: CallHandler,
    entry: HttpRouteEntry,
    { keys, readOnly }: { keys: CallKeys; readOnly: boolean },
    subscriber: Subscriber<unknown>,
  ): void {
    // Made when the handler's value goes out here: a replay or a shared result answers at the
    // platform's next send.
    let capture: ResponseCapture | undefined;
    const options = () => ({
      route: entry.route.name,
      maxBytes: maxResponseBytesOf(entry),
      fresh: this.freshness(),
    });
    const captureOf = () => (capture ??= new ResponseCapture(nodeResponseOf(context), options()));
    const call = new NestCall(subscriber);
    this.runtime.executor
      .execute({
        route: entry.route,
        keys,
        readOnly,
        handler: (handlerContext) =>
          this.runHandler(
            context,
            next,
            entry,
            handlerContext,
            call,
            (value) =>
              (capture = ResponseCapture.holdingFor(value, nodeResponseOf(context), options())),
          ),
      })
      .then(
        (result) => {
          if (!result.replayed && call.emitted) return commitOwn(capture!, result);
          if (call.closed) return;
          // A replay or a shared result is written in place of what the app sends for the value
          // emitted: by the platform's own send, unless the capture already holds what the
          // handler's value made of the response.
          const reply = context.switchToHttp().getResponse<unknown>();
          if (capture !== undefined || !answerAtNextSend(reply, result.response)) {
            captureOf().replaceWith(result.response);
          }
          call.emit(replayedBodyValue(result.response.body));
        },
        (error: unknown) => {
          if (call.emitted) captureOf().replaceWith(problemResponseOf(error));
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
    entry: HttpRouteEntry,
    handlerContext: HandlerContext,
    call: NestCall,
    hold: (value: unknown) => ResponseCapture,
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
    refuseFileResponse(own.value, entry.route.name);
    if (routed.kind === 'error' || call.closed) return detachedResponseOf(own.value, entry);
    const sent = hold(own.value).held!;
    call.emit(routed.value);
    return sent;
  }

  /** Express answers a fresh conditional `GET` with 304 itself; Fastify does not. */
  private freshness(): FreshnessCheck | undefined {
    this.#fresh ??= {
      check: this.adapter().getType() === 'express' ? expressFreshness : undefined,
    };
    return this.#fresh.check;
  }

  private toHttpError(context: ExecutionContext, error: unknown): unknown {
    return toHttpError(this.adapter(), context, error);
  }
}

/** The handler's own response goes out as the app wrote it. */
function commitOwn(capture: ResponseCapture, result: ProtectedCallResult): void {
  // What the app wrote for it could not be kept whole: the refusal kept in its place goes out.
  if (capture.refused) capture.replaceWith(result.response);
  else capture.commit();
}

/** The Node response under the platform's: Express's `res` is one, Fastify's reply wraps one. */
function nodeResponseOf(context: ExecutionContext): ServerResponse {
  const response = context.switchToHttp().getResponse<ServerResponse | { raw: ServerResponse }>();
  return 'raw' in response ? response.raw : response;
}

function maxResponseBytesOf(entry: HttpRouteEntry): number {
  const { idempotent, singleFlight } = entry.route;
  return Math.max(idempotent?.maxResponseBytes ?? 0, singleFlight?.maxResponseBytes ?? 0);
}
