import type { Type } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import type { ProtectedRoute } from '@oncely/core/adapter';
import {
  callHandlerKindOf,
  resolveCallHandler,
  type CallHandlerKind,
} from './call-handler.resolver.js';
import { resolveHttpRoute } from './http-route.resolver.js';
import type { HttpRouteEntry } from './protected-handler.entry.js';
import { declaredProtectionOf, type ProtectedRouteDefiner } from './protected-handler.options.js';

/** A decorated method outside HTTP routes, sorted by where it is called from. */
export interface CallHandlerEntry {
  readonly kind: CallHandlerKind;
  readonly route: ProtectedRoute;
}

/**
 * Receives each protected provider method (not a route, message handler or resolver) with the
 * singleton it lives on, which is where the boot wraps it.
 */
export type ProviderMethodVisitor = (
  instance: Record<string, unknown>,
  method: string,
  handler: object,
  route: ProtectedRoute,
) => void;

/**
 * Finds every `@IdempotentKey` / `@SingleFlight` handler in one pass over an app's controllers
 * and providers, defining each route as it goes (so a bad option or a conflicting claim throws,
 * naming it). The boot runs it on the live app; `oncely registry` on a preview of the module
 * graph, where no provider was created, and both find the same handlers.
 */
export class ProtectedHandlerScan {
  readonly httpRoutes = new WeakMap<object, HttpRouteEntry>();
  readonly callHandlers = new WeakMap<object, CallHandlerEntry>();
  private readonly seen = new WeakSet<object>();

  constructor(private readonly define: ProtectedRouteDefiner) {}

  run(
    discovery: DiscoveryService,
    scanner: MetadataScanner,
    onProviderMethod?: ProviderMethodVisitor,
  ): void {
    const controllers = new Set(discovery.getControllers());
    for (const wrapper of [...controllers, ...discovery.getProviders()]) {
      const instance = staticInstanceOf(wrapper);
      const controller = controllers.has(wrapper) ? (wrapper.metatype as Type | null) : null;
      // Routes are read off the class, so request-scoped controllers count too.
      const prototype = (controller?.prototype ?? (instance && Object.getPrototypeOf(instance))) as
        Record<string, unknown> | undefined;
      if (!prototype) continue;
      for (const method of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[method];
        if (typeof handler !== 'function') continue;
        if (controller && Reflect.getMetadata(PATH_METADATA, handler) !== undefined) {
          this.sortHttpRoute(controller, method, handler);
          continue;
        }
        const entry = this.sortCallHandler(prototype, method, handler);
        if (entry?.kind === 'method' && instance) {
          onProviderMethod?.(instance, method, handler, entry.route);
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
    const route = resolveCallHandler(owner, method, kind, declared, this.define, handler);
    const entry = { kind, route };
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
