/**
 * Redis keys of one business key. The business key sits inside `{...}`, a Redis Cluster hash tag,
 * so every key a script touches lives in one slot. Redis takes the tag from the first `{` to the
 * first `}` after it, so braces inside the business key (or a prefix) would move or empty the tag
 * and scatter the keys over several slots (a CROSSSLOT error in a cluster): they are
 * percent-encoded, together with `%` itself so the encoding stays one-to-one.
 */
export interface FlightKeys {
  readonly lease: string;
  readonly result: string;
  readonly error: string;
  readonly fence: string;
  /** Set while a follower waits: only then does a completion publish a notice. */
  readonly waiters: string;
}

const unsafeInTag = /[%{}]/g;

function escapeTag(businessKey: string): string {
  return businessKey.replace(
    unsafeInTag,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

export function flightKeys(prefix: string, businessKey: string): FlightKeys {
  const base = `${prefix}{${escapeTag(businessKey)}}:`;
  return {
    lease: `${base}lease`,
    result: `${base}result`,
    error: `${base}error`,
    fence: `${base}fence`,
    waiters: `${base}waiters`,
  };
}
