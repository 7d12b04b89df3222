import { sha256Hex } from '../key/sha256.js';

/** The unique column of a record: lower-case hex SHA-256 of the identity's UTF-8 bytes. */
export function recordKeyHash(identity: string): string {
  return sha256Hex(identity);
}
