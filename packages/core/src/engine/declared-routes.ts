import { OperationRegistry } from '../call/operation-registry.js';
import { defineProtectedRoute, type ProtectedRoute } from '../call/protected-route.js';
import type { ProtectionDefaults } from '../call/route-options.js';
import { registryClaimsOf, type RegistryClaim } from '../registry/registry-claim.js';
import type { OncelyEngineOptions } from './oncely-engine.options.js';
import type { ProtectedRouteDeclaration } from './protected-route.declaration.js';
import { resolveProtectionDefaults } from './protection-setup.js';
import { serviceAliasesOf, serviceNameOf } from './service-name.js';

/** The options that decide what an app's routes claim: no coordinator, no store. */
export type DeclaredRoutesOptions = Pick<
  OncelyEngineOptions,
  'namespace' | 'service' | 'serviceAliases' | 'defaults' | 'owner'
>;

/**
 * An app's protected routes and their claims, resolved against its namespace, service and
 * defaults, with nothing to run them on. The engine defines its routes here; a tool listing an
 * app's claims (`oncely registry export`) builds one of its own, so that it opens no connection
 * and registers nothing anywhere.
 */
export class DeclaredRoutes {
  /** Every defined route's claim on its `namespace:operation:version`. */
  readonly registry = new OperationRegistry();
  readonly #routes: ProtectedRoute[] = [];

  private constructor(
    /** The entry point named in error messages. */
    readonly owner: string,
    /** The service owning the claims (the `service` option, or its default). */
    readonly service: string,
    /** Other names the service accepts as its own (the `serviceAliases` option), checked. */
    readonly serviceAliases: readonly string[],
    /** The route defaults, namespace included. */
    readonly defaults: ProtectionDefaults,
  ) {}

  /** Checks the options, naming the first bad one (`OncelyConfigurationError`). */
  static create(options: DeclaredRoutesOptions): DeclaredRoutes {
    const owner = typeof options?.owner === 'string' ? options.owner : 'createOncelyEngine()';
    const defaults = resolveProtectionDefaults(owner, options);
    const service = serviceNameOf(owner, options.service, defaults.namespace);
    return new DeclaredRoutes(
      owner,
      service,
      serviceAliasesOf(owner, options.serviceAliases, service),
      defaults,
    );
  }

  /**
   * Resolves a route's options against the defaults, naming the route and the option when one
   * is bad. Registers nothing: `register` does, once the caller accepts the route.
   */
  resolve(name: string, declared: ProtectedRouteDeclaration): ProtectedRoute {
    return defineProtectedRoute(name, declared, this.defaults);
  }

  /** Registers the route's claims; two routes claiming one operation fail here, naming both. */
  register(route: ProtectedRoute): void {
    this.registry.register(route);
    this.#routes.push(route);
  }

  /** `resolve`, then `register`. */
  define(name: string, declared: ProtectedRouteDeclaration): ProtectedRoute {
    const route = this.resolve(name, declared);
    this.register(route);
    return route;
  }

  /** Every registered route's claims, in registration order. */
  claims(): RegistryClaim[] {
    return this.#routes.flatMap((route) => registryClaimsOf(route, this.service));
  }
}
