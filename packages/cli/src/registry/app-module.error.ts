/** The module given to `oncely registry` does not load, or holds no app to read claims from. */
export class AppModuleError extends Error {
  /** The class's name, kept by bundlers that rename classes. */
  override readonly name = 'AppModuleError';

  constructor(
    /** The module's path, as given on the command line. */
    readonly modulePath: string,
    /** What is wrong with it, and how to fix it. */
    readonly problem: string,
  ) {
    super(`${modulePath} ${problem}`);
  }
}
