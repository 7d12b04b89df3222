import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';

/** A duration or size handed to a record store is not a positive whole number. */
export class InvalidRecordOptionError extends OncelyConfigurationError {
  override readonly code = 'invalid_record_option';

  constructor(
    /** The option's name, e.g. `leaseTtlMs`. */
    readonly option: string,
    /** The value refused. */
    readonly value: unknown,
  ) {
    super(
      `Record store option "${option}" must be a positive whole number (milliseconds for durations), got ${String(value)}.`,
    );
  }
}

/** Returns `value` if it is a positive safe integer, else throws `InvalidRecordOptionError`. */
export function positiveWholeNumber(option: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new InvalidRecordOptionError(option, value);
  return value;
}
