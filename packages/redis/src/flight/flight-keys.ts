/**
 * The Redis key of one business key: one string holding the lease, the cached result or the
 * cached error (see `lua/shared/flight-lease.lua`). The business key sits inside `{...}`, a Redis
 * Cluster hash tag, so the key's slot is the business key's. Redis takes the tag from the first
 * `{` to the first `}` after it, so braces inside the business key (or a prefix) would move or
 * empty the tag: they are percent-encoded, together with `%` itself so the encoding stays
 * one-to-one.
 */
const unsafeInTag = /[%{}]/g;
const encoded = /%(25|7B|7D)/g;
/** Characters SCAN's MATCH pattern gives a meaning to. */
const globSpecial = /[*?[\]\\]/g;
const SUFFIX = '}:flight';

function escapeTag(businessKey: string): string {
  return businessKey.replace(
    unsafeInTag,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** The flight key of `businessKey` under `prefix`. */
export function flightKey(prefix: string, businessKey: string): string {
  return `${prefix}{${escapeTag(businessKey)}${SUFFIX}`;
}

/**
 * A SCAN `MATCH` pattern for the flight keys whose business key starts with `operation:`
 * (`ns:op:ver`, or `ns:op` for all its versions).
 */
export function flightKeyPattern(prefix: string, operation: string): string {
  const glob = (text: string) => text.replace(globSpecial, (char) => `\\${char}`);
  return `${glob(prefix)}{${glob(escapeTag(operation))}:*${SUFFIX}`;
}

/** The business key of a flight key under `prefix`, or undefined for any other key. */
export function businessKeyOf(prefix: string, key: string): string | undefined {
  if (!key.startsWith(`${prefix}{`) || !key.endsWith(SUFFIX)) return undefined;
  return key
    .slice(prefix.length + 1, -SUFFIX.length)
    .replace(encoded, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
