/**
 * A connection flag needs a package that is not installed: the CLI loads the Redis and TypeORM
 * adapters only when asked, so they are optional peers. The message names what to install.
 */
export class MissingPeerError extends Error {
  /** The class's name, kept by bundlers that rename classes. */
  override readonly name = 'MissingPeerError';

  constructor(
    /** The package that could not be loaded, e.g. `ioredis`. */
    readonly packageName: string,
    /** The flag that needs it, e.g. `--redis`. */
    readonly flag: string,
    /** Every package that flag needs, to install together. */
    readonly packages: readonly string[],
    options?: ErrorOptions,
  ) {
    super(
      `${flag} needs the package "${packageName}", which is not installed. Install it next to @oncely/cli: npm install ${packages.join(' ')}`,
      options,
    );
  }
}

/** Whether `error` says that `packageName` itself (not something it imports) was not found. */
export function isMissingModule(error: unknown, packageName: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  return typeof message === 'string' && message.includes(`'${packageName}'`);
}
