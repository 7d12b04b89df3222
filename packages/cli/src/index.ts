/**
 * `@oncely/cli`: the `oncely` command, and what it is built from for scripts of your own.
 * `oncely registry export <module>` writes the claims of an app's routes to a YAML file to be
 * committed; `oncely registry check <module>` fails while they differ from it. `oncely keys`,
 * `inspect`, `release` and `purge` list, inspect and free the keys of a running system.
 *
 * @packageDocumentation
 * @module @oncely/cli
 */

/** Runs `oncely` with a command line; returns its exit code. */
export { ONCELY_COMMANDS, runCli } from './cli/run-cli.js';
export {
  ExitCode,
  UsageError,
  type CliCommand,
  type CliCommandGroup,
  type CliEntry,
  type CliIo,
} from './cli/cli-command.js';

/** Reads an app's claims from the module exporting it, without starting it. */
export { loadAppClaims, type AppClaims } from './registry/app-claims.loader.js';
export { AppModuleError } from './registry/app-module.error.js';
/** The registry file: its text, read and written deterministically. */
export {
  DEFAULT_REGISTRY_FILE,
  REGISTRY_FORMAT,
  claimIdOf,
  parseRegistry,
  registryDocumentOf,
  renderRegistry,
  type RegistryDocument,
} from './registry/registry-document.js';
export { RegistryFileError } from './registry/registry-file.error.js';
/** What differs between the file and the app, as `check` prints it. */
export {
  describeChanges,
  diffRegistries,
  type FieldChange,
  type RegistryChange,
} from './registry/registry-diff.js';
