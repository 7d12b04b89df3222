import { ReplayHeaderPolicyError } from './replay-header-policy.error.js';

/** Headers that describe the representation or resource, the same on every replay. */
export const DEFAULT_REPLAY_HEADERS: readonly string[] = [
  'content-type',
  'content-language',
  'content-location',
  'location',
  'etag',
  'last-modified',
  'cache-control',
  'expires',
  'vary',
  'link',
];

/** Headers that must never be replayed, with the reason given when someone asks for them. */
const REFUSED: Readonly<Record<string, string>> = {
  'set-cookie': 'a session cookie replayed to another request (or client) leaks or fixes a session',
  'set-cookie2':
    'a session cookie replayed to another request (or client) leaks or fixes a session',
  date: 'it is set per response by the server',
  'content-length': 'it is computed per response from the body sent',
  'content-encoding':
    'it describes the encoding applied when the response is sent, not the body kept',
  'transfer-encoding': 'it is a hop-by-hop header',
  connection: 'it is a hop-by-hop header',
  'keep-alive': 'it is a hop-by-hop header',
  'proxy-connection': 'it is a hop-by-hop header',
  'proxy-authenticate': 'it is a hop-by-hop header',
  'proxy-authorization': 'it is a hop-by-hop header',
  te: 'it is a hop-by-hop header',
  trailer: 'it is a hop-by-hop header',
  upgrade: 'it is a hop-by-hop header',
  'idempotent-replayed': 'oncely sets it on every replay',
};

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/**
 * Which response headers a replay reproduces: the safe default set plus an allowlist. Built once at
 * start-up; an allowlist naming a refused header fails there, with the reason.
 */
export class ReplayHeaderPolicy {
  private constructor(
    /** Every header replayed, lower case: the default set and the allowlist. */
    readonly names: ReadonlySet<string>,
  ) {}

  /**
   * The default set plus `allowlist`. Throws `ReplayHeaderPolicyError` for a name that is not a
   * header name or must never be replayed (`set-cookie`, hop-by-hop headers, …).
   */
  static create(allowlist: readonly string[] = []): ReplayHeaderPolicy {
    const names = new Set(DEFAULT_REPLAY_HEADERS);
    for (const header of allowlist) {
      const name = header.trim().toLowerCase();
      if (!HEADER_NAME.test(name)) {
        throw new ReplayHeaderPolicyError(header, 'it is not a valid header name');
      }
      const reason = REFUSED[name];
      if (reason !== undefined) throw new ReplayHeaderPolicyError(header, reason);
      names.add(name);
    }
    return new ReplayHeaderPolicy(names);
  }

  /** The headers to keep for replays, names lower-cased, multiple values joined by `, `. */
  pick(headers: Readonly<Record<string, unknown>>): Record<string, string> {
    const kept: Record<string, string> = {};
    for (const [rawName, value] of Object.entries(headers)) {
      const name = rawName.toLowerCase();
      const text = this.names.has(name) ? headerText(value) : undefined;
      if (text !== undefined) kept[name] = text;
    }
    return kept;
  }
}

/**
 * A header value as frameworks hold it (string, number, or a list for repeated headers) as one
 * field value; `undefined` for anything else.
 */
export function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) {
    const parts = value.map(headerText).filter((part) => part !== undefined);
    return parts.length > 0 ? parts.join(', ') : undefined;
  }
  return undefined;
}

/** A framework's outgoing headers as field values: names lower-cased, unusable values left out. */
export function headerFields(raw: Readonly<Record<string, unknown>>): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    const text = headerText(value);
    if (text !== undefined) fields[name.toLowerCase()] = text;
  }
  return fields;
}
