import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import {
  OncelyConfigurationError,
  defineProtectedRoute,
  type IdempotentRouteOptions,
  type ProtectedRoute,
  type SingleFlightRouteOptions,
} from '@oncely/core';
import {
  IDEMPOTENT_KEY_METADATA,
  ONCELY_RUNTIME,
  SINGLE_FLIGHT_METADATA,
} from './oncely.constants.js';
import type { OncelyRuntime } from './oncely.runtime.js';
import { GRAPHQL_RESOLVER_METADATA } from './oncely-graphql.context.js';
import { wrapProtectedMethod } from './oncely-method.wrapper.js';
import { RPC_PATTERN_METADATA } from './oncely-rpc.context.js';

/** Where a decorated method outside HTTP routes is called from. */
export type OncelyHandlerKind = 'rpc' | 'graphql' | 'method';

export interface OncelyHandlerEntry {
  readonly kind: OncelyHandlerKind;
  readonly route: ProtectedRoute;
}

type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Finds `@IdempotentKey`/`@SingleFlight` outside HTTP routes at start-up. Message handlers
 * (`@MessagePattern`/`@EventPattern`) and resolvers (`@Mutation`) are left to the interceptor,
 * which asks `get(handler)`; any other provider method is wrapped on its instance, with the
 * method's arguments as its key context (`args.0.messageId`). Options are resolved against the
 * module defaults and operations registered as for routes, so a conflicting claim fails the boot.
 */
@Injectable()
export class OncelyHandlerExplorer implements OnModuleInit {
  private readonly entries = new WeakMap<object, OncelyHandlerEntry>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    @Inject(ONCELY_RUNTIME) private readonly runtime: OncelyRuntime,
  ) {}

  /** The entry of a message handler or resolver method, if it carries an oncely decorator. */
  get(handler: object): OncelyHandlerEntry | undefined {
    return this.entries.get(handler);
  }

  onModuleInit(): void {
    const controllers = new Set(this.discovery.getControllers());
    for (const wrapper of [...controllers, ...this.discovery.getProviders()]) {
      const instance = staticInstanceOf(wrapper);
      if (!instance) continue;
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[method];
        if (typeof handler !== 'function') continue;
        const isHttpRoute =
          controllers.has(wrapper) && Reflect.getMetadata(PATH_METADATA, handler) !== undefined;
        if (isHttpRoute) continue;
        const entry = this.entries.get(handler) ?? this.resolve(instance, method, handler);
        if (!entry) continue;
        this.entries.set(handler, entry);
        if (entry.kind === 'method') {
          wrapProtectedMethod(
            instance,
            method,
            handler as Method,
            entry.route,
            this.runtime.executor,
          );
        }
      }
    }
  }

  private resolve(
    instance: object,
    method: string,
    handler: object,
  ): OncelyHandlerEntry | undefined {
    const idempotent = Reflect.getMetadata(IDEMPOTENT_KEY_METADATA, handler) as
      IdempotentRouteOptions | undefined;
    const singleFlight = Reflect.getMetadata(SINGLE_FLIGHT_METADATA, handler) as
      SingleFlightRouteOptions | undefined;
    if (!idempotent && !singleFlight) return undefined;
    const kind = kindOf(handler);
    const name = `${instance.constructor.name}.${method} (${KIND_LABELS[kind]})`;
    if (idempotent?.transactional) {
      throw new OncelyConfigurationError(
        `${name} asks for transactional: true, which only HTTP routes support for now. Write through your own transaction and keep the record outside it, or expose the operation as an HTTP route.`,
      );
    }
    if (kind === 'method' && idempotent && idempotent.idempotencyKey !== 'ignored') {
      throw new OncelyConfigurationError(
        `${name} has no request headers to read an Idempotency-Key from. Set idempotencyKey: 'ignored' and identify the call by its arguments (for example target: 'args.0.messageId').`,
      );
    }
    // A method's input is its arguments; a message's and a resolver's, the payload or arguments.
    const input = kind === 'method' ? { input: ['args'] } : {};
    const route = defineProtectedRoute(
      name,
      {
        ...(idempotent && { idempotent: { ...input, ...idempotent } }),
        ...(singleFlight && { singleFlight: { ...input, ...singleFlight } }),
      },
      this.runtime.defaults,
    );
    this.runtime.registry.register(route);
    return { kind, route };
  }
}

const KIND_LABELS: Readonly<Record<OncelyHandlerKind, string>> = {
  rpc: 'message handler',
  graphql: 'resolver',
  method: 'provider method',
};

function kindOf(handler: object): OncelyHandlerKind {
  if (Reflect.getMetadata(RPC_PATTERN_METADATA, handler) !== undefined) return 'rpc';
  if (Reflect.getMetadata(GRAPHQL_RESOLVER_METADATA, handler) !== undefined) return 'graphql';
  return 'method';
}

/** Singletons only: a request-scoped instance here would be a throwaway one. */
function staticInstanceOf(wrapper: InstanceWrapper): Record<string, unknown> | undefined {
  const instance: unknown = wrapper.instance;
  if (typeof instance !== 'object' || instance === null) return undefined;
  if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) return undefined;
  return instance as Record<string, unknown>;
}
