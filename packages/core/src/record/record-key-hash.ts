import { createHash } from 'node:crypto';

/** The unique column of a record: lower-case hex SHA-256 of the identity's UTF-8 bytes. */
export function recordKeyHash(identity: string): string {
  return createHash('sha256').update(identity, 'utf8').digest('hex');
}
