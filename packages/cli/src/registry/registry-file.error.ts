/** The registry file cannot be read as one: missing, not YAML, or not in the registry's format. */
export class RegistryFileError extends Error {
  /** The class's name, kept by bundlers that rename classes. */
  override readonly name = 'RegistryFileError';

  constructor(
    /** The file, as given on the command line. */
    readonly file: string,
    /** What is wrong with it, and how to fix it. */
    readonly problem: string,
  ) {
    super(`${file} ${problem}`);
  }
}
