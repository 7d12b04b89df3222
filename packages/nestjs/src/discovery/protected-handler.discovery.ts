import { Inject, Injectable, type OnModuleInit, type Type } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import type { ProtectedRoute } from '@oncely/core/adapter';
import { wrapProtectedMethod } from '../method/protected-method.wrapper.js';
import { ONCELY_RUNTIME } from '../oncely.constants.js';
import type { OncelyRuntime } from '../oncely.runtime.js';
import {
  callHandlerKindOf,
  resolveCallHandler,
  type CallHandlerKind,
} from './call-handler.resolver.js';
import { resolveHttpRoute } from './http-route.resolver.js';
import type { HttpRouteEntry } from './protected-handler.entry.js';
import { declaredProtectionOf, type ProtectedRouteDefiner } from './protected-handler.options.js';

type Method = (this: unknown, ...args: unknown[]) => unknown;

interface CallHandlerEntry {
  readonly kind: CallHandlerKind;
  readonly route: ProtectedRoute;
}

/**
 * Finds every `@IdempotentKey` / `@SingleFlight` handler at start-up, in one pass over the app's
 * controllers and providers, and sorts it by where it is called from: HTTP routes and message
 * handlers / resolvers are looked up by the interceptor per call; any other provider method is
 * wrapped on its instance. Every route is resolved against the module defaults and its
 * operations registered, so a bad option or a conflicting claim fails the boot, naming it.
 */
@Injectable()
export class ProtectedHandlerDiscovery implements OnModuleInit {
  private readonly httpRoutes = new WeakMap<object, HttpRouteEntry>();
  private readonly callHandlers = new WeakMap<object, CallHandlerEntry>();
  private readonly seen = new WeakSet<object>();
  private readonly define: ProtectedRouteDefiner;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    @Inject(ONCELY_RUNTIME) private readonly runtime: OncelyRuntime,
  ) {
    this.define = (name, declared) => runtime.defineRoute(name, declared);
  }

  /** The entry of an HTTP route handler, or `undefined` when it carries no oncely decorator. */
  httpRoute(handler: object): HttpRouteEntry | undefined {
    return this.httpRoutes.get(handler);
  }

  /** The route of a protected message handler (`rpc`) or resolver (`graphql`). */
  callRoute(kind: 'rpc' | 'graphql', handler: object): ProtectedRoute | undefined {
    const entry = this.callHandlers.get(handler);
    return entry?.kind === kind ? entry.route : undefined;
  }

  onModuleInit(): void {
    const controllers = new Set(this.discovery.getControllers());
    for (const wrapper of [...controllers, ...this.discovery.getProviders()]) {
      const instance = staticInstanceOf(wrapper);
      const controller = controllers.has(wrapper) ? (wrapper.metatype as Type | null) : null;
      // Routes are read off the class, so request-scoped controllers count too.
      const prototype = (controller?.prototype ?? (instance && Object.getPrototypeOf(instance))) as
        Record<string, unknown> | undefined;
      if (!prototype) continue;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[method];
        if (typeof handler !== 'function') continue;
        if (controller && Reflect.getMetadata(PATH_METADATA, handler) !== undefined) {
          this.sortHttpRoute(controller, method, handler);
          continue;
        }
        const entry = this.sortCallHandler(prototype, method, handler);
        if (entry?.kind === 'method' && instance) {
          wrapProtectedMethod(
            instance,
            method,
            handler as Method,
            entry.route,
            this.runtime.executor,
            this.runtime.standbys,
          );
        }
      }
    }
  }

  private sortHttpRoute(controller: Type, method: string, handler: object): void {
    if (this.seen.has(handler)) return;
    this.seen.add(handler);
    const declared = declaredProtectionOf(handler);
    const entry = resolveHttpRoute(controller, method, handler, declared, this.define);
    if (entry) this.httpRoutes.set(handler, entry);
  }

  private sortCallHandler(
    prototype: object,
    method: string,
    handler: object,
  ): CallHandlerEntry | undefined {
    const known = this.callHandlers.get(handler);
    if (known || this.seen.has(handler)) return known;
    this.seen.add(handler);
    const declared = declaredProtectionOf(handler);
    if (!declared) return undefined;
    const kind = callHandlerKindOf(handler);
    const owner = prototype.constructor.name;
    const entry = { kind, route: resolveCallHandler(owner, method, kind, declared, this.define) };
    this.callHandlers.set(handler, entry);
    return entry;
  }
}

/** Singletons only: a request-scoped instance here would be a throwaway one. */
function staticInstanceOf(wrapper: InstanceWrapper): Record<string, unknown> | undefined {
  const instance: unknown = wrapper.instance;
  if (typeof instance !== 'object' || instance === null) return undefined;
  if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) return undefined;
  return instance as Record<string, unknown>;
}
