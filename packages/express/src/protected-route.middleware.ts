import { toProblemResponse } from '@oncely/core';
import {
  expressFreshness,
  httpCallKeys,
  writeHttpResponse,
  type HttpKeyHooks,
  type HttpResponse,
  type ProtectedCallExecutor,
  type ProtectedRoute,
} from '@oncely/core/adapter';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { reportDownstreamErrors } from './downstream-errors.js';
import type { BodyValidator } from './oncely-express-options.interface.js';
import { RouteCall } from './route-call.js';

export interface ProtectedRouteMiddlewareOptions {
  readonly route: ProtectedRoute;
  readonly executor: ProtectedCallExecutor;
  readonly resolveUser: (req: Request) => unknown;
  readonly validate?: BodyValidator;
}

/**
 * The middleware behind `idempotent()` and `singleFlight()`. In order: core's `httpCallKeys`
 * (refuse a request whose key reads a body nothing parsed, validate the body, build the keys
 * from the request, multer's files by the SHA-256 of their bytes), then core's executor decides
 * (run the rest of the route, share, replay, refuse). oncely's errors become problem+json
 * through core's one mapping; anything else (the handler's own errors included) goes to `next(error)`, to the app's error handling. A
 * `HEAD` (Express routes it to the `GET` handler) is a read-only call; an `OPTIONS` passes
 * straight through.
 *
 * The route's response is held back whole (several writes, a piped stream, `res.sendFile`) and
 * sent only once the executor is done, exactly as kept; a response that cannot be kept whole is
 * refused before anything is sent. Whatever the route writes after its response is swallowed.
 */
export function protectedRouteMiddleware(options: ProtectedRouteMiddlewareOptions): RequestHandler {
  const { route, executor, resolveUser, validate } = options;

  const middleware = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    // A preflight (`app.all`, `app.use`, `cors` with `preflightContinue`) is no operation.
    if (req.method === 'OPTIONS') {
      next();
      return;
    }
    reportDownstreamErrors(req, middleware);
    let call: RouteCall | undefined;
    try {
      const keys = await httpCallKeys(route, req, keyHooksOf(req, resolveUser, validate));
      const result = await executor.execute({
        route,
        keys,
        readOnly: req.method === 'HEAD',
        handler: (context) => {
          call = RouteCall.run(req, res, route, context, next);
          return call.response;
        },
      });
      // The route's own response, held whole; a refused one is answered with what was kept.
      if (!result.replayed && call?.capture.ended && !call.capture.refused) {
        call.capture.commit();
        return;
      }
      answer(res, call, result.response);
    } catch (error) {
      const problem = toProblemResponse(error);
      if (!problem) {
        // The route's own error: its response (if any was held) gives way to the error handling.
        call?.capture.release();
        next(error);
        return;
      }
      answer(res, call, {
        status: problem.status,
        headers: problem.headers,
        body: { kind: 'json', value: problem.body },
      });
    }
  };
  return middleware;
}

/** oncely's own answer: through the route's capture when the route ran, so nothing it writes
 * later can reach the client too. */
function answer(res: Response, call: RouteCall | undefined, response: HttpResponse): void {
  if (call) call.capture.interrupt(response);
  else writeHttpResponse(res, response, expressFreshness);
}

function keyHooksOf(
  req: Request,
  resolveUser: (req: Request) => unknown,
  validate: BodyValidator | undefined,
): HttpKeyHooks {
  return {
    validate: validate && ((body) => validate(body, req)),
    user: () => resolveUser(req),
  };
}
