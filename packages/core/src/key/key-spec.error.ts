import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';

/**
 * A key spec is malformed: a programming error, raised when the spec is first validated (at
 * decoration time through `validateKeySpec`, or on the first `buildKey`), never per request.
 */
export class KeySpecError extends OncelyConfigurationError {
  override readonly code = 'key_spec_invalid';

  /**
   * @param spec `namespace:operation` of the offending spec, as far as it is known.
   * @param field the part of the spec at fault, e.g. `fingerprintBits` or `scope[1].default`.
   * @param problem what is wrong and how to fix it, as a sentence.
   */
  constructor(
    readonly spec: string,
    readonly field: string,
    readonly problem: string,
  ) {
    super(`Invalid key spec ${spec}: ${field} ${problem}`);
  }
}
