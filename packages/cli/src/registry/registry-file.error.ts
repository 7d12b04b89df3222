/** The registry file cannot be read as one: missing, not YAML, or not in the registry's format. */
export class RegistryFileError extends Error {
  override readonly name = 'RegistryFileError';

  constructor(
    /** The file, as given on the command line. */
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file} ${problem}`);
  }
}
