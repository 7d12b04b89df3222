import type { Type } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { readIdempotencyTransaction } from '../decorators/idempotency-manager.decorator.js';

/** One parameter decorator of a route handler, as Nest records it. */
export interface RouteArgument {
  readonly index: number;
  readonly data?: unknown;
  readonly factory?: unknown;
  /** The `RouteParamtypes` of a built-in parameter decorator; `undefined` for custom ones. */
  readonly type?: number;
}

const NOT_A_DTO = new Set<unknown>([
  undefined,
  String,
  Number,
  Boolean,
  Object,
  Array,
  Symbol,
  BigInt,
]);

/** The parameter decorators of `controller.method`, with the built-in ones' types. */
export function routeArgumentsOf(controller: Type, method: string): RouteArgument[] {
  const metadata = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) ?? {}) as Record<
    string,
    RouteArgument
  >;
  return Object.entries(metadata).map(([key, arg]) => {
    const type = Number(key.split(':')[0]);
    return Number.isInteger(type) ? { ...arg, type } : arg;
  });
}

/** Whether the route takes `@IdempotencyManager()`. */
export function takesIdempotencyManager(args: readonly RouteArgument[]): boolean {
  return args.some((arg) => arg.factory === readIdempotencyTransaction);
}

/** Whether the route takes `@Res()` or `@Next()`, and so may write its response itself. */
export function takesResponse(args: readonly RouteArgument[]): boolean {
  return args.some(
    (arg) => arg.type === RouteParamtypes.RESPONSE || arg.type === RouteParamtypes.NEXT,
  );
}

/** The DTO class of the route's whole `@Body()`, if it declares one. */
export function bodyTypeOf(
  controller: Type,
  method: string,
  args: readonly RouteArgument[],
): Type | undefined {
  const body = args.find((arg) => arg.type === RouteParamtypes.BODY && arg.data === undefined);
  if (!body) return undefined;
  const paramTypes = (Reflect.getMetadata(
    'design:paramtypes',
    controller.prototype as object,
    method,
  ) ?? []) as unknown[];
  const type = paramTypes[body.index];
  return typeof type === 'function' && !NOT_A_DTO.has(type) ? (type as Type) : undefined;
}
