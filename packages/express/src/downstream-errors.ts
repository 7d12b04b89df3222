import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { RouteCall } from './route-call.js';

const ORIGINAL = Symbol('oncely:original-handler');

type Handle = ((...args: unknown[]) => unknown) & { [ORIGINAL]?: Handle };

interface RouteLayer {
  handle: Handle;
}

/**
 * Express gives a middleware no way to see `next(error)` from the handlers after it: they
 * receive the route's own `next`. So the handlers that follow a protected middleware on its
 * route are wrapped (once, on first use) to report errors to the call holding the response back:
 * a thrown error or `next(error)` is a failure oncely does not keep, not a response to store.
 * Mounted with `app.use()` instead of on a route, a middleware cannot do this, and an error
 * handler's response is kept like any other.
 */
export function reportDownstreamErrors(req: Request, middleware: RequestHandler): void {
  const stack = (req.route as { stack?: unknown } | undefined)?.stack;
  if (!Array.isArray(stack)) return;
  const layers = stack as RouteLayer[];
  const own = layers.findIndex(
    (layer) =>
      (layer.handle as unknown) === middleware ||
      (layer.handle[ORIGINAL] as unknown) === middleware,
  );
  if (own < 0) return;
  for (const layer of layers.slice(own + 1)) {
    // Error handlers (four parameters) receive errors already; they must keep their arity.
    if (typeof layer.handle !== 'function' || layer.handle.length > 3) continue;
    if (layer.handle[ORIGINAL] !== undefined) continue;
    layer.handle = reportingErrors(layer.handle);
  }
}

function reportingErrors(handle: Handle): Handle {
  const wrapped = function (this: unknown, req: Request, res: Response, next: NextFunction) {
    const call = RouteCall.active(req);
    const forward: NextFunction = call
      ? (error?: unknown) => {
          if (isError(error) && call.fail(error)) return;
          next(error as Error);
        }
      : next;
    try {
      const returned = handle.call(this, req, res, forward);
      if (isThenable(returned)) {
        return returned.then(undefined, (error: unknown) =>
          forward(error ?? new Error('Rejected promise')),
        );
      }
      return returned;
    } catch (error) {
      forward(error);
      return undefined;
    }
  } as Handle;
  wrapped[ORIGINAL] = handle;
  return wrapped;
}

// `next('route')` and `next('router')` skip handlers; they are not errors.
function isError(value: unknown): boolean {
  return Boolean(value) && value !== 'route' && value !== 'router';
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
