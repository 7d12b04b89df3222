import {
  resolveCallKeys,
  toProblemResponse,
  type KeyContext,
  type ProtectedCallExecutor,
  type ProtectedRoute,
} from '@oncely/core';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { reportDownstreamErrors } from './downstream-errors.js';
import type { BodyValidator } from './oncely-express-options.interface.js';
import { ResponseCapture } from './response-capture.js';
import { writeResponse } from './response-writer.js';

export interface ProtectedRouteMiddlewareOptions {
  readonly route: ProtectedRoute;
  readonly executor: ProtectedCallExecutor;
  readonly resolveUser: (req: Request) => unknown;
  readonly validate?: BodyValidator;
}

/**
 * The middleware behind `idempotent()` and `singleFlight()`. In order: validate the body, build
 * the keys from the request, then let core's executor decide (run the rest of the route, share,
 * replay, refuse). oncely's errors become problem+json through core's one mapping; anything else
 * (the handler's own errors included) goes to `next(error)`, to the app's error handling.
 */
export function protectedRouteMiddleware(options: ProtectedRouteMiddlewareOptions): RequestHandler {
  const { route, executor, resolveUser, validate } = options;

  const middleware = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    reportDownstreamErrors(req, middleware);
    let capture: ResponseCapture | undefined;
    try {
      if (validate) req.body = await validate(req.body, req);
      const keys = resolveCallKeys(route, await keyContextOf(req, resolveUser));
      const result = await executor.execute({
        route,
        keys,
        handler: (context) => {
          capture = new ResponseCapture(req, res, route.name, context);
          return capture.run(next);
        },
      });
      if (!result.replayed && capture?.captured) {
        capture.commit();
        return;
      }
      capture?.discard();
      writeResponse(res, result.response);
    } catch (error) {
      capture?.discard();
      const problem = toProblemResponse(error);
      if (!problem) {
        next(error);
        return;
      }
      writeResponse(res, {
        status: problem.status,
        headers: problem.headers,
        body: { kind: 'json', value: problem.body },
      });
    }
  };
  return middleware;
}

async function keyContextOf(
  req: Request,
  resolveUser: (req: Request) => unknown,
): Promise<KeyContext> {
  return {
    body: req.body,
    params: req.params,
    query: req.query,
    headers: req.headers,
    user: await resolveUser(req),
  };
}
