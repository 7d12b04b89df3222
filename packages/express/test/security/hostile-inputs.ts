import { parseIdempotencyKeyHeader } from '@oncely/core';
import fc from 'fast-check';

/**
 * Hostile inputs shared by the Express and Nest suites, and what each must get back. Header
 * values are latin1 strings (what Node puts on the wire byte for byte): UTF-8 text is sent as its
 * bytes, as a client that does not care about RFC 9110 would.
 */

const asWireBytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
// Node's client refuses control characters (and so would any proxy); everything else goes out.
const sendable = (value: string) => /^[\t\x20-\x7e\x80-\xff]*$/.test(value);
const injection = fc.constantFrom(':', ',', '%', '{', '}', '%3A', '%25', '"', '\\', ';', '=', ' ');

export const hostileKeyHeader: fc.Arbitrary<string> = fc
  .oneof(
    fc.string({ minLength: 0, maxLength: 40 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).map(asWireBytes),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }).map(asWireBytes),
    fc.integer({ min: 250, max: 300 }).map((n) => 'k'.repeat(n)),
    fc.integer({ min: 250, max: 300 }).map((n) => `"${'q'.repeat(n)}"`),
    fc.integer({ min: 1, max: 20_000 }).map((n) => 'x'.repeat(n)),
    fc
      .array(fc.oneof(injection, fc.stringMatching(/^[A-Za-z0-9-]{1,6}$/)), {
        minLength: 1,
        maxLength: 8,
      })
      .map((p) => p.join('')),
    fc.stringMatching(/^[A-Za-z0-9 !#-~]{0,20}$/).map((s) => `"${s}"`),
    fc.constantFrom(
      '""',
      '"a";p=1',
      '"a", "b"',
      'a, b',
      ':YWJj:',
      '?1',
      '42',
      '"unterminated',
      '"esc\\"aped"',
      '"bad\\escape"',
      '*',
      '@x',
      '"é"',
      ' "padded" ',
      'tok:en',
      'a{b}c',
      '%00',
      '\t"tab"\t',
    ),
  )
  .filter(sendable);

/** What oncely must answer to a key header value, independent of the rest of the request. */
export function keyHeaderVerdict(value: string): { valid: true; key: string } | { valid: false } {
  // Node trims optional whitespace around a header value before anyone sees it.
  const parsed = parseIdempotencyKeyHeader(value.replace(/^[\t ]+|[\t ]+$/g, ''));
  return parsed.kind === 'valid' ? { valid: true, key: parsed.value } : { valid: false };
}

/** Raw JSON texts meant to pollute prototypes, if anything merged them carelessly. */
export const pollutionBody: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(
      '{"__proto__":{"polluted":"yes"}}',
      '{"constructor":{"prototype":{"polluted":"yes"}}}',
      '{"prototype":{"polluted":"yes"}}',
      '{"__proto__":{"toString":"x","valueOf":1}}',
      '{"__proto__":null}',
      '{"$t":"object","v":{"__proto__":{"polluted":"yes"}}}',
    ),
    fc.boolean(),
  )
  .map(([payload, withFields]) =>
    withFields ? `${payload.slice(0, -1)},"orderId":"o-1","amount":"10.00"}` : payload,
  );

const deepBody: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 50, max: 20_000 }), fc.constantFrom('array', 'object'))
  .map(([depth, kind]) =>
    kind === 'array'
      ? '['.repeat(depth) + ']'.repeat(depth)
      : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth),
  );

const wrongTypes: fc.Arbitrary<string> = fc
  .record(
    {
      orderId: fc.oneof(
        fc.jsonValue(),
        fc.string(),
        fc.constantFrom('', ' ', 'a'.repeat(65), 'o:1,2{3}%'),
      ),
      amount: fc.oneof(fc.jsonValue(), fc.constantFrom('10.00', '1e999', '-0', 'NaN', '')),
    },
    { requiredKeys: [] },
  )
  .map((value) => JSON.stringify(value));

export const hostileBody: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue({ maxDepth: 6 }).map((value) => JSON.stringify(value)),
  wrongTypes,
  pollutionBody,
  deepBody,
  fc
    .integer({ min: 90_000, max: 400_000 })
    .map((n) => JSON.stringify({ orderId: 'o-1', amount: '1.00', pad: 'p'.repeat(n) })),
  fc.constantFrom(
    '{',
    '{"a":1,}',
    'nul',
    '"\\ud800"',
    '[1,2',
    '{"orderId":"o-1","amount":"1.00"',
    '',
  ),
);

/** Tenants and keys made of the characters that separate key segments, to forge another key. */
export const injectionPiece: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.constantFrom(':', ',', '%', '{', '}', '%3A', '~', '.', '-'),
      fc.stringMatching(/^[a-z0-9]{1,3}$/),
    ),
    {
      minLength: 1,
      maxLength: 5,
    },
  )
  .map((parts) => parts.join(''));

/** Every own property of Object.prototype, to prove nothing was added or replaced. */
export function prototypeSnapshot(): string {
  return Object.getOwnPropertyNames(Object.prototype)
    .map((name) => `${name}:${typeof (Object.prototype as Record<string, unknown>)[name]}`)
    .join('|');
}

export const PAY_BODY_PATTERN = /^[A-Za-z0-9-]{1,64}$/;
export const AMOUNT_PATTERN = /^\d{1,9}\.\d{2}$/;

/** The business validation both apps apply: orderId and amount, nothing else kept. */
export function isValidPayBody(value: unknown): value is { orderId: string; amount: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { orderId, amount } = value as Record<string, unknown>;
  return (
    typeof orderId === 'string' &&
    PAY_BODY_PATTERN.test(orderId) &&
    typeof amount === 'string' &&
    AMOUNT_PATTERN.test(amount)
  );
}
