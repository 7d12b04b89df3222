import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { ProtectedRoute } from '@oncely/core/adapter';
import { wrapProtectedMethod } from '../method/protected-method.wrapper.js';
import { ONCELY_RUNTIME } from '../oncely.constants.js';
import type { OncelyRuntime } from '../oncely.runtime.js';
import type { HttpRouteEntry } from './protected-handler.entry.js';
import { ProtectedHandlerScan } from './protected-handler.scan.js';

type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Finds every `@IdempotentKey` / `@SingleFlight` handler at start-up (`ProtectedHandlerScan`)
 * and keeps them for the interceptor: HTTP routes and message handlers / resolvers are looked up
 * per call; any other provider method is wrapped on its instance. Every route is resolved against
 * the module defaults and its operations registered, so a bad option or a conflicting claim fails
 * the boot, naming it.
 */
@Injectable()
export class ProtectedHandlerDiscovery implements OnModuleInit {
  private readonly scan: ProtectedHandlerScan;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    @Inject(ONCELY_RUNTIME) private readonly runtime: OncelyRuntime,
  ) {
    this.scan = new ProtectedHandlerScan((name, declared) => runtime.defineRoute(name, declared));
  }

  /** The entry of an HTTP route handler, or `undefined` when it carries no oncely decorator. */
  httpRoute(handler: object): HttpRouteEntry | undefined {
    return this.scan.httpRoutes.get(handler);
  }

  /** The route of a protected message handler (`rpc`) or resolver (`graphql`). */
  callRoute(kind: 'rpc' | 'graphql', handler: object): ProtectedRoute | undefined {
    const entry = this.scan.callHandlers.get(handler);
    return entry?.kind === kind ? entry.route : undefined;
  }

  /**
   * Finds and wraps every protected handler. A refused one (a bad option, a `transactional`
   * route on a store without transactions) fails the boot after closing the runtime: Nest runs no
   * shutdown hook after a failed init, and the connections the runtime opened would keep the
   * process alive.
   */
  async onModuleInit(): Promise<void> {
    try {
      this.scan.run(this.discovery, this.scanner, (instance, method, handler, route) =>
        wrapProtectedMethod(
          instance,
          method,
          handler as Method,
          route,
          this.runtime.executor,
          this.runtime.standbys,
        ),
      );
    } catch (error) {
      await this.runtime.close();
      throw error;
    }
  }
}
