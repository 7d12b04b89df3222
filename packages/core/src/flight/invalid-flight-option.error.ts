import { describeOptionValue } from '../errors/describe-option-value.js';
import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';

/**
 * An option or argument of SingleFlight (engine default, per-run option) or of a coordinator has
 * a value they cannot work with.
 */
export class InvalidFlightOptionError extends OncelyConfigurationError {
  override readonly code = 'invalid_flight_option';

  constructor(
    /** The option's name, e.g. `leaseTtl`. */
    readonly option: string,
    /** The value refused. */
    readonly value: unknown,
    expected: string,
    /** Who takes the option, for the message. */
    owner = 'SingleFlight',
  ) {
    super(`${owner} option "${option}" must be ${expected}; got ${describeOptionValue(value)}.`);
  }
}
