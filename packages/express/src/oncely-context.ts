import type { HandlerContext } from '@oncely/core';
import type { Request } from 'express';
import { RouteCall } from './route-call.js';

/**
 * What oncely hands the handler of a protected route: the `signal` that aborts when the lease is
 * lost, and on `transactional` routes the `transaction` (a TypeORM `EntityManager`) to write
 * through, so the handler's writes and the record commit together. `undefined` outside one.
 */
export function getOncelyContext(req: Request): HandlerContext | undefined {
  return RouteCall.active(req)?.context;
}
