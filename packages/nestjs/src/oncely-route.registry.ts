import {
  Inject,
  Injectable,
  RequestMethod,
  StreamableFile,
  type OnModuleInit,
  type Type,
} from '@nestjs/common';
import {
  HTTP_CODE_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  REDIRECT_METADATA,
  RENDER_METADATA,
  RESPONSE_PASSTHROUGH_METADATA,
  ROUTE_ARGS_METADATA,
  SSE_METADATA,
} from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import {
  TransactionalStoreRequiredError,
  UnsupportedResponseError,
  defineProtectedRoute,
  type IdempotentRouteOptions,
  type ProtectedRoute,
  type SingleFlightRouteOptions,
} from '@oncely/core';
import { Readable } from 'node:stream';
import { readIdempotencyTransaction } from './idempotency-manager.decorator.js';
import { OncelyConfigurationError } from '@oncely/core';
import {
  IDEMPOTENT_KEY_METADATA,
  ONCELY_RUNTIME,
  SINGLE_FLIGHT_METADATA,
} from './oncely.constants.js';
import type { OncelyRuntime } from './oncely.runtime.js';

/** What the interceptor needs to know about one decorated route, resolved at start-up. */
export interface OncelyRouteEntry {
  readonly route: ProtectedRoute;
  /** The `@Body()` DTO class the interceptor validates and transforms, if the route has one. */
  readonly bodyType?: Type;
  /** The status Nest answers with on success (`@HttpCode()` or the method's default). */
  readonly statusCode: number;
}

interface RouteArgument {
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

/**
 * Finds every `@IdempotentKey` / `@SingleFlight` route at start-up, resolves and checks its
 * options against the module defaults, and registers its operations: the boot fails, naming the
 * routes, on a conflicting claim, a stream or file response, a `@Res()` without passthrough, or
 * `transactional` without a store that supports transactions.
 */
@Injectable()
export class OncelyRouteRegistry implements OnModuleInit {
  private readonly entries = new WeakMap<object, OncelyRouteEntry>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    @Inject(ONCELY_RUNTIME) private readonly runtime: OncelyRuntime,
  ) {}

  /** The entry of a route handler, or `undefined` when it carries no oncely decorator. */
  get(handler: object): OncelyRouteEntry | undefined {
    return this.entries.get(handler);
  }

  onModuleInit(): void {
    for (const wrapper of this.discovery.getControllers()) {
      const controller = wrapper.metatype as Type | undefined;
      if (!controller?.prototype) continue;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[method];
        if (typeof handler !== 'function' || this.entries.has(handler)) continue;
        // Message handlers and plain methods are `OncelyHandlerExplorer`'s.
        if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
        const entry = this.resolve(controller, method, handler);
        if (entry) this.entries.set(handler, entry);
      }
    }
  }

  private resolve(controller: Type, method: string, handler: object): OncelyRouteEntry | undefined {
    const idempotent = this.reflector.get<IdempotentRouteOptions | undefined>(
      IDEMPOTENT_KEY_METADATA,
      handler as never,
    );
    const singleFlight = this.reflector.get<SingleFlightRouteOptions | undefined>(
      SINGLE_FLIGHT_METADATA,
      handler as never,
    );
    const args = this.routeArguments(controller, method);
    const name = describeRoute(controller, method, handler);
    if (!idempotent && !singleFlight) {
      if (args.some((arg) => arg.factory === readIdempotencyTransaction)) {
        throw new OncelyConfigurationError(
          `${name} uses @IdempotencyManager() without @IdempotentKey({ transactional: true }); it would never receive a transaction.`,
        );
      }
      return undefined;
    }
    const route = defineProtectedRoute(
      name,
      { ...(idempotent && { idempotent }), ...(singleFlight && { singleFlight }) },
      this.runtime.defaults,
    );
    this.refuseUnsupportedResponses(controller, method, handler, name, args);
    if (route.idempotent?.transactional && !this.runtime.supportsTransactions) {
      throw new TransactionalStoreRequiredError(name);
    }
    if (
      args.some((arg) => arg.factory === readIdempotencyTransaction) &&
      !route.idempotent?.transactional
    ) {
      throw new OncelyConfigurationError(
        `${name} uses @IdempotencyManager() but is not marked @IdempotentKey({ transactional: true }); it would never receive a transaction.`,
      );
    }
    this.runtime.registry.register(route);
    const bodyType = this.bodyType(controller, method, args);
    return {
      route,
      ...(bodyType && { bodyType }),
      statusCode: this.statusCode(handler),
    };
  }

  private refuseUnsupportedResponses(
    controller: Type,
    method: string,
    handler: object,
    name: string,
    args: readonly RouteArgument[],
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
    const handlesResponse = args.some(
      (arg) => arg.type === RouteParamtypes.RESPONSE || arg.type === RouteParamtypes.NEXT,
    );
    const passthrough =
      Reflect.getMetadata(RESPONSE_PASSTHROUGH_METADATA, controller, method) === true;
    if (handlesResponse && !passthrough) {
      throw new OncelyConfigurationError(
        `${name} writes its response through @Res()/@Next(), so oncely never sees it and cannot store or replay it. Return the body instead, or use @Res({ passthrough: true }).`,
      );
    }
  }

  private routeArguments(controller: Type, method: string): RouteArgument[] {
    const metadata = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) ?? {}) as Record<
      string,
      RouteArgument
    >;
    return Object.entries(metadata).map(([key, arg]) => {
      const type = Number(key.split(':')[0]);
      return Number.isInteger(type) ? { ...arg, type } : arg;
    });
  }

  private bodyType(
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

  private statusCode(handler: object): number {
    const declared: unknown = Reflect.getMetadata(HTTP_CODE_METADATA, handler);
    if (typeof declared === 'number') return declared;
    return Reflect.getMetadata(METHOD_METADATA, handler) === RequestMethod.POST ? 201 : 200;
  }
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
