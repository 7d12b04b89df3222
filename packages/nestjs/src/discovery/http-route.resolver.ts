import { RequestMethod, StreamableFile, type Type } from '@nestjs/common';
import {
  HTTP_CODE_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  REDIRECT_METADATA,
  RENDER_METADATA,
  RESPONSE_PASSTHROUGH_METADATA,
  SSE_METADATA,
} from '@nestjs/common/constants.js';
import {
  OncelyConfigurationError,
  UnsupportedResponseError,
  type ProtectedRouteDeclaration,
} from '@oncely/core';
import { Readable } from 'node:stream';
import { keysAfterInterceptors } from './body-producer.js';
import type { HttpRouteEntry } from './protected-handler.entry.js';
import type { ProtectedRouteDefiner } from './protected-handler.options.js';
import {
  bodyTypeOf,
  routeArgumentsOf,
  takesIdempotencyManager,
  takesResponse,
} from './route-arguments.js';

/**
 * Resolves one decorated HTTP route at start-up. The boot fails, naming the route, on a stream
 * or file response, a `@Res()` without passthrough, or an `@IdempotencyManager()` that would never
 * receive a transaction; the route definer refuses bad options and conflicting claims.
 */
export function resolveHttpRoute(
  controller: Type,
  method: string,
  handler: object,
  declared: ProtectedRouteDeclaration | undefined,
  define: ProtectedRouteDefiner,
): HttpRouteEntry | undefined {
  const args = routeArgumentsOf(controller, method);
  const name = describeRoute(controller, method, handler);
  if (!declared) {
    if (takesIdempotencyManager(args)) {
      throw new OncelyConfigurationError(
        `${name} uses @IdempotencyManager() without @IdempotentKey({ transactional: true }); it would never receive a transaction.`,
      );
    }
    return undefined;
  }
  refuseUnkeptResponses(controller, method, handler, name, takesResponse(args));
  if (takesIdempotencyManager(args) && !declared.idempotent?.transactional) {
    throw new OncelyConfigurationError(
      `${name} uses @IdempotencyManager() but is not marked @IdempotentKey({ transactional: true }); it would never receive a transaction.`,
    );
  }
  const keyAfterInterceptors = keysAfterInterceptors(controller, handler, name);
  const route = define(name, declared);
  const bodyType = bodyTypeOf(controller, method, args);
  return {
    route,
    ...(bodyType && { bodyType }),
    statusCode: statusCodeOf(handler),
    keyAfterInterceptors,
  };
}

/** Responses oncely could never keep or replay whole: refused before the first request. */
function refuseUnkeptResponses(
  controller: Type,
  method: string,
  handler: object,
  name: string,
  takesRes: boolean,
): void {
  const returnType: unknown = Reflect.getMetadata(
    'design:returntype',
    controller.prototype as object,
    method,
  );
  if (
    typeof returnType === 'function' &&
    (returnType === StreamableFile ||
      returnType.prototype instanceof StreamableFile ||
      returnType === Readable ||
      returnType.prototype instanceof Readable ||
      returnType === ReadableStream)
  ) {
    throw new UnsupportedResponseError(name, `a ${returnType.name} (declared return type)`);
  }
  const refused: Array<[string, string]> = [
    [SSE_METADATA, '@Sse() event streams'],
    [RENDER_METADATA, '@Render() views'],
    [REDIRECT_METADATA, '@Redirect() responses'],
  ];
  for (const [key, what] of refused) {
    if (Reflect.getMetadata(key, handler) !== undefined) {
      throw new UnsupportedResponseError(name, what);
    }
  }
  const passthrough =
    Reflect.getMetadata(RESPONSE_PASSTHROUGH_METADATA, controller, method) === true;
  if (takesRes && !passthrough) {
    throw new OncelyConfigurationError(
      `${name} writes its response through @Res()/@Next(), so oncely never sees it and cannot store or replay it. Return the body instead, or use @Res({ passthrough: true }).`,
    );
  }
}

function statusCodeOf(handler: object): number {
  const declared: unknown = Reflect.getMetadata(HTTP_CODE_METADATA, handler);
  if (typeof declared === 'number') return declared;
  return Reflect.getMetadata(METHOD_METADATA, handler) === RequestMethod.POST ? 201 : 200;
}

/** `OrdersController.create (POST /orders)`. */
function describeRoute(controller: Type, method: string, handler: object): string {
  const verb = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number] ?? 'GET';
  const base = pathOf(Reflect.getMetadata(PATH_METADATA, controller));
  const path = pathOf(Reflect.getMetadata(PATH_METADATA, handler));
  const full = `/${[base, path].filter((part) => part !== '').join('/')}`;
  return `${controller.name}.${method} (${verb} ${full})`;
}

function pathOf(value: unknown): string {
  const first: unknown = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first.replace(/^\/+|\/+$/g, '') : '';
}
