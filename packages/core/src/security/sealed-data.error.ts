import { OncelyError } from '../errors/oncely-error.js';

/** Why a sealed value could not be opened. */
export type SealedDataFailure = 'unknown_key' | 'tampered' | 'not_sealed' | 'malformed';

/**
 * A stored response or cached result could not be decrypted: it was altered, moved to another
 * key, sealed with a key that is no longer configured, or written unencrypted. The message says
 * what to check and never contains any of the stored data.
 */
export class SealedDataError extends OncelyError {
  readonly code = 'sealed_data_unreadable';

  constructor(
    /** Why the value did not open. */
    readonly failure: SealedDataFailure,
    /** Id of the key the value names, when it names one. */
    readonly keyId: string | undefined,
  ) {
    super(
      `A stored response or cached result could not be decrypted (${failure}). If keys were rotated, keep every key that sealed data still retained in "encryption.keys" (the first seals, all open); otherwise the stored data was altered and must be purged.`,
    );
  }
}
