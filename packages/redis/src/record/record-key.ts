import { keyPrefix } from '../connection/key-prefix.js';

/** The Redis key of the record with a given key hash. */
export type RecordKey = (keyHash: string) => string;

/**
 * The record keys under `prefix` (checked; default `oncely:`): `<prefix>{<keyHash>}:record`, one
 * hash per identity, with the key hash (a hex digest, so never a brace) as its cluster hash tag.
 * The store and the operator's admin both build their keys here, so they always agree.
 */
export function recordKeys(prefix?: string): RecordKey {
  const checked = keyPrefix(prefix);
  return (keyHash) => `${checked}{${keyHash}}:record`;
}
