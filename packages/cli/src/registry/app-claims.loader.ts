import type { RegistryClaim } from '@oncely/core';
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { AppModuleError } from './app-module.error.js';

/** Who owns an app's claims, and every claim its routes make. */
export interface AppClaims {
  /** The app's `service` option, or its default. */
  readonly service: string;
  /** Every claim of the app's protected routes and methods. */
  readonly claims: readonly RegistryClaim[];
}

/** What `createOncely()` returns, as far as the registry reads it (checked by shape). */
interface OncelyInstance {
  readonly service: string;
  claims(): RegistryClaim[];
  close(): Promise<void>;
}

/** Metadata `@Module()` leaves on a class for each key it is given. */
const NEST_MODULE_KEYS = ['imports', 'controllers', 'providers', 'exports'];

/**
 * Loads the module at `file` (an absolute path) and reads the claims of the app it exports:
 *
 * - a Nest root module (a module class, a `DynamicModule` such as `AppModule.register(config)`,
 *   or a promise of one): read by `readOncelyClaims` from `@oncely/nestjs`, which scans the module
 *   graph in preview mode, creating no provider, so nothing connects;
 * - the `Oncely` instance of an Express app (`createOncely()`), whose middleware the module
 *   created when it loaded: its claims are listed, then it is closed.
 *
 * `exportName` picks the export; without it, the default export if it is one of these, else the
 * module's only such export. `shown` names the module in errors.
 */
export async function loadAppClaims(
  file: string,
  exportName?: string,
  shown: string = file,
): Promise<AppClaims> {
  if (!existsSync(file)) {
    throw new AppModuleError(
      shown,
      'does not exist. Give the compiled JavaScript module that exports the app (for example dist/app.module.js), after building it.',
    );
  }
  let exports: Record<string, unknown>;
  try {
    exports = (await importModule(file)) as Record<string, unknown>;
  } catch (error) {
    throw new AppModuleError(shown, `could not be loaded: ${(error as Error).message}`);
  }
  const app = pickExport(exports, exportName, shown);
  if (isOncelyInstance(app)) {
    try {
      return { service: app.service, claims: app.claims() };
    } finally {
      await app.close();
    }
  }
  const { readOncelyClaims } = await importNestIntegration(shown);
  return readOncelyClaims(app as Parameters<typeof readOncelyClaims>[0]);
}

/**
 * `import()` in both builds: the CommonJS one compiles it to `require()`, which takes a path
 * (and loads ES modules too, from Node 20.19); the ES one needs a URL for an absolute path.
 */
function importModule(file: string): Promise<unknown> {
  return typeof require === 'function' ? import(file) : import(pathToFileURL(file).href);
}

async function importNestIntegration(shown: string): Promise<typeof import('@oncely/nestjs')> {
  try {
    return await import('@oncely/nestjs');
  } catch (error) {
    throw new AppModuleError(
      shown,
      `exports a Nest module, and reading it needs @oncely/nestjs, which did not load: ${(error as Error).message}`,
    );
  }
}

function pickExport(
  exports: Record<string, unknown>,
  exportName: string | undefined,
  shown: string,
): unknown {
  if (exportName !== undefined) {
    if (exports[exportName] === undefined) {
      throw new AppModuleError(shown, `has no export named "${exportName}".`);
    }
    return exports[exportName];
  }
  if (isApp(exports.default)) return exports.default;
  const candidates = Object.keys(exports).filter(
    (name) => name !== 'default' && isApp(exports[name]),
  );
  if (candidates.length === 1) return exports[candidates[0]!];
  throw new AppModuleError(
    shown,
    candidates.length === 0
      ? 'exports no app: export the root Nest module (a module class, or a DynamicModule such as AppModule.register(config)) or the oncely instance of an Express app, or name the export with --export.'
      : `exports several apps (${candidates.join(', ')}); name one with --export.`,
  );
}

function isApp(value: unknown): boolean {
  return (
    isOncelyInstance(value) ||
    value instanceof Promise ||
    isDynamicModule(value) ||
    isNestModuleClass(value)
  );
}

function isOncelyInstance(value: unknown): value is OncelyInstance {
  const candidate = value as Partial<OncelyInstance> | null | undefined;
  return (
    typeof candidate?.service === 'string' &&
    typeof candidate.claims === 'function' &&
    typeof candidate.close === 'function'
  );
}

function isDynamicModule(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { module?: unknown }).module === 'function'
  );
}

/** A class `@Module()` gave at least one key (`@Module({})` leaves none: name it with --export). */
function isNestModuleClass(value: unknown): boolean {
  const { getMetadata } = Reflect as { getMetadata?: (key: string, target: object) => unknown };
  return (
    typeof value === 'function' &&
    typeof getMetadata === 'function' &&
    NEST_MODULE_KEYS.some((key) => getMetadata(key, value) !== undefined)
  );
}
