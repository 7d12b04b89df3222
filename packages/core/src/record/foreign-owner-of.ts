import { isOwnService } from '../errors/own-service.js';
import type { BeginOptions } from './idempotency-record-store.port.js';

/**
 * The owner of a live record that `options` does not accept: `undefined` when the record has no
 * owner (written by an app that names no service), is the caller's or one of its `ownerAliases`, or the
 * caller compares none or shares the operation. What every store's `begin` checks first.
 */
export function foreignOwnerOf(
  recordOwner: string | null | undefined,
  options: Pick<BeginOptions, 'owner' | 'ownerAliases' | 'shared'>,
): string | undefined {
  if (!recordOwner || options.owner === undefined || options.shared === true) return undefined;
  return isOwnService(recordOwner, options.owner, options.ownerAliases) ? undefined : recordOwner;
}
