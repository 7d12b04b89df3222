/**
 * The Redis key of the record for `keyHash`: one hash per identity, the key hash as its Redis
 * Cluster hash tag (a hex digest, so it never holds a brace).
 */
export function recordKey(prefix: string, keyHash: string): string {
  return `${prefix}{${keyHash}}:record`;
}
