import type { HandlerContext } from '@oncely/core';
import {
  ResponseCapture,
  expressFreshness,
  handlerContext,
  type HttpResponse,
  type ProtectedRoute,
} from '@oncely/core/adapter';
import type { NextFunction, Request, Response } from 'express';

const CALLS = Symbol('oncely:route-calls');

type CallingRequest = Request & { [CALLS]?: RouteCall[] };

/**
 * One run of the rest of a protected route (`next()`, up to the handler's response): the
 * capture holding its response back, the context handed to the handler, and the way a handler
 * after the middleware reports an error it passed on instead of answering.
 */
export class RouteCall {
  /** Holds the response back until the executor has kept (or replaced) it. */
  readonly capture: ResponseCapture;
  /** The handler's context, the transaction of an enclosing call included. */
  readonly context: HandlerContext;
  /** What the route answered; rejects with the error it passed on, or with a refusal. */
  readonly response: Promise<HttpResponse>;
  readonly #req: CallingRequest;
  #settled = false;
  #reject: (error: unknown) => void = () => undefined;

  private constructor(req: Request, res: Response, route: ProtectedRoute, own: HandlerContext) {
    this.#req = req;
    this.context = withEnclosing(RouteCall.active(req)?.context, own);
    this.capture = new ResponseCapture(res, {
      route: route.name,
      maxBytes: maxResponseBytesOf(route),
      fresh: expressFreshness,
    });
    const failed = new Promise<never>((_resolve, reject) => (this.#reject = reject));
    // Once the route answered, a failure reported late is not this call's and nobody waits.
    failed.catch(() => undefined);
    this.response = Promise.race([this.capture.hold(), failed]).finally(() => this.#settle());
  }

  /** Starts holding the response back, then runs the rest of the route. */
  static run(
    req: Request,
    res: Response,
    route: ProtectedRoute,
    context: HandlerContext,
    next: NextFunction,
  ): RouteCall {
    const call = new RouteCall(req, res, route, context);
    ((req as CallingRequest)[CALLS] ??= []).push(call);
    try {
      next();
    } catch (error) {
      call.fail(error);
    }
    return call;
  }

  /** The innermost call holding the request's response back, if any. */
  static active(req: Request): RouteCall | undefined {
    return (req as CallingRequest)[CALLS]?.at(-1);
  }

  /**
   * Ends the call with an error the route passed on (`next(error)`, a throw) before answering:
   * the response is released for the error handling that follows. Returns `false` once the
   * route has answered (or been refused): the error is then not this call's.
   */
  fail(error: unknown): boolean {
    if (this.#settled || this.capture.ended) return false;
    this.capture.release();
    this.#settle();
    this.#reject(error);
    return true;
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    const calls = this.#req[CALLS];
    const index = calls?.lastIndexOf(this) ?? -1;
    if (calls && index >= 0) calls.splice(index, 1);
  }
}

/** An inner call (SingleFlight inside an idempotent route) keeps the outer's transaction. */
function withEnclosing(outer: HandlerContext | undefined, own: HandlerContext): HandlerContext {
  if (!outer) return own;
  return handlerContext(
    () => AbortSignal.any([outer.signal, own.signal]),
    own.transaction ?? outer.transaction,
  );
}

/** The capture keeps what either mechanism may keep; the executor applies each one's limit. */
function maxResponseBytesOf(route: ProtectedRoute): number {
  return Math.max(
    route.idempotent?.maxResponseBytes ?? 0,
    route.singleFlight?.maxResponseBytes ?? 0,
  );
}
