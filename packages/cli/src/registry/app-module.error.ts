/** The module given to `oncely registry` does not load, or holds no app to read claims from. */
export class AppModuleError extends Error {
  override readonly name = 'AppModuleError';

  constructor(
    /** The module's path, as given on the command line. */
    readonly modulePath: string,
    readonly problem: string,
  ) {
    super(`${modulePath} ${problem}`);
  }
}
