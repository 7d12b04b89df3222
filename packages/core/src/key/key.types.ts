/**
 * What a key is built from. `body` is the validated DTO (a class instance after
 * class-transformer, or plain JSON); header names are lower case, as Node delivers them.
 */
export interface KeyContext {
  /** The validated request body (`body.*` paths). */
  readonly body?: unknown;
  /** The route parameters (`params.*`). */
  readonly params?: unknown;
  /** The parsed query string (`query.*`). */
  readonly query?: unknown;
  /** The request headers, names lower case (`headers.*`). */
  readonly headers?: unknown;
  /** The principal an auth guard or middleware set on the request (`user.*`). */
  readonly user?: unknown;
  /** The arguments of a protected provider method (or message handler): `args.0.messageId`. */
  readonly args?: readonly unknown[];
  /** The request's uploaded files, each as the SHA-256 of its bytes (`files.document.0`). */
  readonly files?: UploadedFileDigests;
}

/**
 * Uploaded files by form field, in upload order, each as the lower-case hex SHA-256 of its bytes:
 * what an upload contributes to a key, so another file is another payload and the same bytes
 * sent again are the same one.
 */
export type UploadedFileDigests = Readonly<Record<string, readonly string[]>>;

/**
 * A value a scope or target segment may hold, escaped into the key. Scope values are taken
 * exactly and by type (a boolean is refused there); target values are compared as text.
 */
export type KeySegmentScalar = string | number | bigint | boolean | Date;

/**
 * A dotted path into the context whose first segment is `body`, `params`, `query`, `headers`,
 * `user`, `args` or `files`: `'user.tenantId'`, `'params.docId'`, `'headers.x-tenant-id'`, `'body.items.0.sku'`.
 * Property names containing a dot cannot be addressed; use a function source for those.
 */
export type KeyPath = string;

/**
 * A path that may be absent. The default is required and explicit, so that a missing value never
 * silently becomes a placeholder shared by unrelated requests.
 */
export interface OptionalKeyPath {
  /** Where the value is read from. */
  readonly path: KeyPath;
  /** Marks the path as optional; there is no implicit default. */
  readonly optional: true;
  /** The value a missing field stands for in the key. */
  readonly default: KeySegmentScalar;
}

/** The object form of a required path, for symmetry with `OptionalKeyPath`. */
export interface RequiredKeyPath {
  /** Where the value is read from; a request without it is refused (`MissingKeyFieldError`). */
  readonly path: KeyPath;
  /** Required, as a bare path is. */
  readonly optional?: false;
}

/**
 * One value of a scope or target segment. A function must return a scalar; returning
 * `undefined`, `null` or `''` is a `MissingKeyFieldError`.
 */
export type KeyFieldSource =
  KeyPath | OptionalKeyPath | RequiredKeyPath | ((ctx: KeyContext) => unknown);

/**
 * How a string in the input is normalised before hashing:
 * - `'trim'` (the default): Unicode NFC, CRLF turned into LF, whitespace trimmed at both ends;
 *   inner spaces and letter case are kept.
 * - `'exact'`: kept exactly as received.
 * - a function: its result is used as is and must be a string.
 */
export type StringNormalization = 'exact' | 'trim' | ((value: string) => string);

/**
 * Field rules for `canonicalize`. Paths are dotted, relative to the value being canonicalised,
 * and `*` matches any one property name or array index. A `normalize` rule applies to every
 * string at or below its path (object keys excepted); the most specific rule wins.
 */
export interface CanonicalizeOptions {
  /** String normalisation by path (`'note': 'exact'`); `'trim'` where no rule applies. */
  readonly normalize?: Readonly<Record<string, StringNormalization>>;
  /** Arrays at these paths are sorted by their elements' canonical form. */
  readonly unordered?: readonly string[];
}

/**
 * Declares how a business key is built. Every path in a spec, including the keys of `normalize`
 * and the entries of `unordered`, is a path into the `KeyContext` (so they start with `body.`,
 * `query.` ...). Treat specs as immutable: a spec is validated once and cached by identity.
 */
export interface KeySpec {
  /** Who owns the key space: one per service or domain. */
  readonly namespace: string;
  /** What is done, e.g. `order-create`. */
  readonly operation: string;
  /** Rule, prompt, template or schema version; defaults to `DEFAULT_KEY_VERSION` (`v1`). */
  readonly version?: string;
  /** The business boundary (tenant, user, session); all values required unless optional. */
  readonly scope?: KeyFieldSource | readonly KeyFieldSource[];
  /** The object acted on (order id, document id). */
  readonly target?: KeyFieldSource | readonly KeyFieldSource[];
  /**
   * Paths whose values decide the result. The canonical input is the projection of the context
   * onto them: `['body.amount', 'query.from']` hashes `{"body":{"amount":…},"query":{"from":…}}`.
   * Default `['body', 'files']`: the whole validated body and the digests of any uploaded files.
   * An absent value is left out (a request without files hashes as `{"body":…}`); `[]` hashes
   * `{}`.
   */
  readonly input?: KeyPath | readonly KeyPath[];
  /** Fingerprint length in bits: a multiple of 4 from 64 to 256; default 128. */
  readonly fingerprintBits?: number;
  /** Per-field string normalisation, keyed by context path (`'body.note': 'exact'`). */
  readonly normalize?: Readonly<Record<string, StringNormalization>>;
  /** Context paths of arrays whose order does not matter (`'body.tags'`, `'body.items.*.tags'`). */
  readonly unordered?: readonly string[];
}

/** A business key as `buildKey` builds it: the key, its record identity, the payload's hashes. */
export interface BusinessKey {
  /** `namespace:operation:version:scope:target:fingerprint`. */
  readonly key: string;
  /** The key without its fingerprint segment: what a durable idempotency record is found by. */
  readonly identity: string;
  /** The first `fingerprintBits / 4` hex characters of `digest`. */
  readonly fingerprint: string;
  /** Full SHA-256 hex of the canonical input: what a durable record stores for mismatch checks. */
  readonly digest: string;
}
