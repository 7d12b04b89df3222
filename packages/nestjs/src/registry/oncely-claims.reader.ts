import type { DynamicModule, Type } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModulesContainer, NestFactory } from '@nestjs/core';
import type { RegistryClaim } from '@oncely/core';
import { DeclaredRoutes, type DeclaredRoutesOptions } from '@oncely/core/adapter';
import { ProtectedHandlerScan } from '../discovery/protected-handler.scan.js';
import { ONCELY_DECLARED_OPTIONS } from '../oncely.constants.js';
import { withDeclaredOptions } from '../oncely.declared-options.js';
import { ONCELY_MODULE_OPTIONS } from '../oncely.module-definition.js';
import type {
  OncelyDeclaredOptions,
  OncelyModuleFactoryOptions,
} from '../oncely-module-options.interface.js';
import { OncelyClaimsUnreadableError } from './oncely-claims-unreadable.error.js';

/** An app's root module as `NestFactory.create` takes it. */
export type NestRootModule = Type | DynamicModule | Promise<DynamicModule>;

/** Who owns an app's claims, and every claim its routes make. */
export interface OncelyClaims {
  /** The app's `service` option, or its default. */
  readonly service: string;
  /** Every claim of the app's protected routes and methods. */
  readonly claims: readonly RegistryClaim[];
}

/**
 * Reads every claim an app's routes make, without starting the app: Nest scans the module graph
 * in preview mode, which creates no provider (no factory runs, so no connection opens and no
 * lifecycle hook is called), and the decorated handlers are found and checked as at boot, against
 * `OncelyModule`'s namespace, service and defaults. Claims go to a registry of this call's own,
 * so nothing is registered anywhere. Throws what the boot would on a bad option or two routes
 * claiming one operation, and `OncelyClaimsUnreadableError` when the options cannot be read.
 *
 * Meant for tools (`oncely registry`), not for a running app: it silences Nest's static logger
 * for the process (`logger: false`), as Nest applies that option process-wide.
 */
export async function readOncelyClaims(rootModule: NestRootModule): Promise<OncelyClaims> {
  const root = await rootModule;
  const app = await NestFactory.createApplicationContext(root, {
    preview: true,
    abortOnError: false,
    logger: false,
  });
  try {
    const modules = app.get(ModulesContainer);
    const routes = DeclaredRoutes.create({
      ...moduleOptionsIn(modules, nameOf(root)),
      owner: 'OncelyModule',
    });
    new ProtectedHandlerScan((name, declared) => routes.define(name, declared)).run(
      new DiscoveryService(modules),
      new MetadataScanner(),
    );
    return { service: routes.service, claims: routes.claims() };
  } finally {
    await app.close();
  }
}

/**
 * `OncelyModule`'s options as far as they decide claims: those of `forRoot` (a value), or those
 * `forRootAsync` was given next to its factory, which is never run here.
 */
function moduleOptionsIn(modules: ModulesContainer, root: string): DeclaredRoutesOptions {
  const hosts = [...modules.values()].filter((module) =>
    module.providers.has(ONCELY_MODULE_OPTIONS),
  );
  if (hosts.length !== 1) {
    throw new OncelyClaimsUnreadableError(
      root,
      hosts.length === 0
        ? `imports no OncelyModule, so none of its routes is protected. Pass the module the app starts with (the one given to NestFactory.create).`
        : `imports OncelyModule ${hosts.length} times; an app imports it once.`,
    );
  }
  const host = hosts[0]!;
  const options = host.providers.get(ONCELY_MODULE_OPTIONS)!;
  const declared = host.providers.get(ONCELY_DECLARED_OPTIONS)?.instance as
    Partial<OncelyDeclaredOptions> | undefined;
  if (!options.metatype) {
    return withDeclaredOptions(declared, options.instance as OncelyModuleFactoryOptions);
  }
  if (declared?.namespace === undefined) {
    throw new OncelyClaimsUnreadableError(
      root,
      `builds OncelyModule's options in a factory, which is not run here (it could open connections). Give namespace, and service and defaults if the app sets them, to forRootAsync next to the factory: OncelyModule.forRootAsync({ namespace: 'shop', service: 'shop-api', imports, inject, useFactory }).`,
    );
  }
  return declared as DeclaredRoutesOptions;
}

function nameOf(root: Type | DynamicModule): string {
  return 'module' in root ? root.module.name : root.name;
}
