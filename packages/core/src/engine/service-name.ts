import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';
import { describeOptionValue } from '../errors/describe-option-value.js';

/** Longest `service` name: an npm package name fits. */
export const MAX_SERVICE_NAME_LENGTH = 128;

/**
 * What a `service` may be named: letters, digits, `.`, `_`, `~`, `-`, with one optional npm scope
 * (`@acme/`) in front, so a package name fits as it is. It is stamped on what the service owns
 * and compared exactly, so no spaces, colons or other separators.
 */
export const SERVICE_NAME_PATTERN =
  /^(?:@[A-Za-z0-9][A-Za-z0-9._~-]*\/)?[A-Za-z0-9][A-Za-z0-9._~-]*$/;

/**
 * The service name the options give, checked; when they give none, the `name` of the nearest
 * `package.json` above the working directory (where `npm start` and container images run an app
 * from), else the namespace. `owner` names the entry point in the error.
 */
export function serviceNameOf(
  owner: string,
  service: unknown,
  namespace: string,
  cwd: string = process.cwd(),
): string {
  if (service === undefined) {
    const name = packageNameAbove(cwd);
    return name !== undefined && isServiceName(name) ? name : namespace;
  }
  if (typeof service !== 'string' || !isServiceName(service)) {
    throw new OncelyConfigurationError(
      `${owner} option "service" must name the service owning these claims, such as "shop-api" or "@acme/shop-api" (letters, digits, . _ ~ -, after an optional @scope/; at most ${MAX_SERVICE_NAME_LENGTH} characters), got ${describeOptionValue(service)}. Leave it out to use the app's package name.`,
    );
  }
  return service;
}

/**
 * The `serviceAliases` option checked: other service names, each one only once and none of them
 * `service` itself. `owner` names the entry point in the error.
 */
export function serviceAliasesOf(
  owner: string,
  aliases: unknown,
  service: string,
): readonly string[] {
  if (aliases === undefined) return [];
  const option = `${owner} option "serviceAliases"`;
  const fix =
    'List the names this service is being renamed from or to, such as ["shop"] beside service: "shop-api"; see docs/shared-claims.md.';
  if (!Array.isArray(aliases)) {
    throw new OncelyConfigurationError(
      `${option} must be an array of service names, got ${describeOptionValue(aliases)}. ${fix}`,
    );
  }
  const seen = new Set<string>();
  for (const [index, alias] of (aliases as unknown[]).entries()) {
    if (typeof alias !== 'string' || !isServiceName(alias)) {
      throw new OncelyConfigurationError(
        `${option} has ${describeOptionValue(alias)} at index ${index}, which is not a service name (letters, digits, . _ ~ -, after an optional @scope/; at most ${MAX_SERVICE_NAME_LENGTH} characters). ${fix}`,
      );
    }
    if (alias === service) {
      throw new OncelyConfigurationError(
        `${option} lists "${alias}", the service’s own name: it always counts as its own. ${fix}`,
      );
    }
    if (seen.has(alias)) {
      throw new OncelyConfigurationError(`${option} lists "${alias}" twice. ${fix}`);
    }
    seen.add(alias);
  }
  return [...seen];
}

function isServiceName(name: string): boolean {
  return name.length <= MAX_SERVICE_NAME_LENGTH && SERVICE_NAME_PATTERN.test(name);
}

/** The `name` of the first `package.json` found from `dir` upwards that has one. */
function packageNameAbove(dir: string): string | undefined {
  for (let current = dir; ; current = dirname(current)) {
    const name = packageNameIn(current);
    if (name !== undefined) return name;
    if (dirname(current) === current) return undefined;
  }
}

function packageNameIn(dir: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, 'package.json'), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const name: unknown = (JSON.parse(text) as { name?: unknown }).name;
    return typeof name === 'string' && name !== '' ? name : undefined;
  } catch {
    return undefined;
  }
}
