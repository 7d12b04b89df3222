import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import {
  BUSINESS_KEY_PATTERN,
  buildKey,
  canonicalize,
  KeyIgnore,
  KeyInputError,
  type KeyContext,
  type KeySpec,
} from '@oncely/core';
import { KEY_IDENTITY_PATTERN } from '../../src/key/key-grammar.js';
import { MAX_KEY_LENGTH } from '../../src/key/key.constants.js';
import { ReferenceRejection, referenceCanonicalize } from './reference-canonical.js';

class PropertyDto {
  @KeyIgnore() traceId?: unknown;
  amount?: unknown;
  note?: unknown;
}

/** Keys that exercise every branch: `$` tags, array indices, `__proto__`, non-ASCII, NFD. */
const anyKey = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.constantFrom('$bigint', '$set', '$', '0', '1', '10', '2', '__proto__', 'toJSON', 'traceId'),
  fc.string({ unit: 'grapheme', maxLength: 4 }),
  fc.string({ unit: 'grapheme', maxLength: 4 }).map((key) => key.normalize('NFD')),
);

const anyString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }).map((text) => `  ${text.normalize('NFD')}\r\n`),
  fc.constantFrom('a\r\nb', 'a\rb', '\u00a0x\ufeff', '\ud800', 'x\udc00y', '100.00', ''),
);

const anyValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    anyString,
    fc.double(),
    fc.integer(),
    fc.constant(-0),
    fc.bigInt(),
    fc.boolean(),
    fc.constant(null),
    fc.date(),
    fc.uint8Array({ maxLength: 8 }),
    fc.uint8Array({ maxLength: 8 }).map((bytes) => Buffer.from(bytes)),
    tie('array'),
    tie('object'),
    tie('map'),
    tie('set'),
    tie('dto'),
  ),
  array: fc.array(fc.option(tie('value'), { nil: undefined }), { maxLength: 4 }),
  object: fc.dictionary(anyKey, fc.option(tie('value'), { nil: undefined }), { maxKeys: 5 }),
  map: fc
    .array(fc.tuple(fc.oneof(anyString, fc.integer(), tie('value')), tie('value')), {
      maxLength: 3,
    })
    .map((entries) => new Map(entries)),
  set: fc.array(tie('value'), { maxLength: 4 }).map((elements) => new Set(elements)),
  dto: fc
    .record({ traceId: tie('value'), amount: tie('value'), note: tie('value') })
    .map((fields) => Object.assign(new PropertyDto(), fields)),
})).value;

/**
 * The canonical text, or the fact of a rejection. Which of several problems in one value is
 * reported first may differ between implementations, so reasons are checked by the unit tests.
 */
type Outcome = { readonly text: string } | { readonly rejected: true };

function outcome(run: () => string): Outcome {
  try {
    return { text: run() };
  } catch (error) {
    if (error instanceof KeyInputError || error instanceof ReferenceRejection) {
      return { rejected: true };
    }
    throw error;
  }
}

/** A deterministic shuffle driven by fast-check's seed. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const copy = [...items];
  let state = seed >>> 0 || 1;
  for (let index = copy.length - 1; index > 0; index--) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    const other = state % (index + 1);
    [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
  }
  return copy;
}

/** The same value with every object's keys and every Map's entries inserted in another order. */
function permuted(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) {
    return value.map((element, index) => permuted(element, seed + index + 1));
  }
  if (value instanceof Map) {
    const entries = [...(value as Map<unknown, unknown>)];
    return new Map(shuffled(entries, seed).map(([key, member]) => [key, permuted(member, seed)]));
  }
  if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array)) {
    if (value instanceof Date) {
      return value;
    }
    if (value instanceof Set) {
      return new Set(shuffled([...(value as Set<unknown>)], seed).map((e) => permuted(e, seed)));
    }
    const copy = Object.create(Object.getPrototypeOf(value) as object | null) as object;
    for (const key of shuffled(Object.keys(value), seed)) {
      Object.defineProperty(copy, key, {
        value: permuted((value as Record<string, unknown>)[key], seed + key.length),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return copy;
  }
  return value;
}

describe('key properties', () => {
  it('canonicalize matches the RFC 8785 reference over a plain reimplementation', () => {
    fc.assert(
      fc.property(anyValue, (value) => {
        expect(outcome(() => canonicalize(value))).toEqual(
          outcome(() => referenceCanonicalize(value)),
        );
      }),
      { numRuns: 2_000 },
    );
  });

  it('canonical form is invariant under object key, Map entry and Set element permutation', () => {
    fc.assert(
      fc.property(anyValue, fc.integer(), (value, seed) => {
        expect(outcome(() => canonicalize(permuted(value, seed)))).toEqual(
          outcome(() => canonicalize(value)),
        );
      }),
      { numRuns: 1_000 },
    );
  });

  describe('distinct inputs never share a key, equal inputs always do', () => {
    // A domain on which normalisation is the identity, so "distinct" is plain deep inequality.
    const normalizedText = (arbitrary: fc.Arbitrary<string>) =>
      arbitrary.map((text) => text.normalize('NFC').replaceAll('\r\n', '\n').trim());
    const piece = fc.constantFrom('a', 'b', ':', ',', '%', '%2C', '{', '}', '~', ' ', 'é', '1');
    const segmentValue = fc
      .oneof(
        normalizedText(fc.array(piece, { minLength: 1, maxLength: 4 }).map((p) => p.join(''))),
        normalizedText(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 })),
        fc.constantFrom('x'.repeat(64), 'x'.repeat(65), 'y'.repeat(65), 'é'.repeat(11)),
      )
      .filter((text) => text !== '');
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        normalizedText(fc.constantFrom('a', 'b', '1', 'true', 'null', '100.00', '10000', 'a b')),
        fc.constantFrom(0, 1, 100, 10000, 1.5),
        fc.constantFrom(true, false, null),
        fc.constantFrom(1n, 100n),
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('a', 'b', '1', '$a', 'é'), tie('value'), {
          maxKeys: 3,
          noNullPrototype: true,
        }),
      ),
    })).value;
    // Null-prototype objects build the same key as plain ones but are not deep-equal to them.
    const plain = { noNullPrototype: true };
    const context = fc.record(
      {
        user: fc.record({ tenantId: segmentValue, id: segmentValue }, plain),
        params: fc.record({ cartId: segmentValue }, plain),
        body: json,
      },
      plain,
    );
    const spec: KeySpec = {
      namespace: 'p',
      operation: 'distinct',
      scope: ['user.tenantId', 'user.id'],
      target: 'params.cartId',
    };

    it('holds for random contexts', () => {
      fc.assert(
        fc.property(fc.array(context, { minLength: 2, maxLength: 12 }), (contexts) => {
          const keys = contexts.map((ctx) => buildKey(spec, ctx as KeyContext).key);
          contexts.forEach((left, i) => {
            contexts.forEach((right, j) => {
              if (i < j) {
                expect(keys[i] === keys[j]).toBe(isDeepStrictEqual(left, right));
              }
            });
          });
        }),
        { numRuns: 1_000 },
      );
    });
  });

  it('scope values are identities: distinct by type or by any code unit, never merged', () => {
    const piece = fc.constantFrom(
      'a',
      ' ',
      '7',
      'e\u0301',
      '\u00e9',
      '\r\n',
      '\n',
      '%N',
      '%2C',
      ',',
    );
    const scopeValue = fc.oneof(
      fc.array(piece, { minLength: 1, maxLength: 4 }).map((pieces) => pieces.join('')),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }),
      fc.constantFrom(7, 7.5, -1, 0),
      fc.constantFrom(7n, -1n, 0n),
      fc.constantFrom(new Date(0), new Date(7)),
    );
    const tenant = scopeValue.filter(
      (member) => typeof member !== 'string' || member.trim() !== '',
    );
    const scoped: KeySpec = { namespace: 'p', operation: 'scope', scope: 'user.tenantId' };

    fc.assert(
      fc.property(tenant, tenant, (left, right) => {
        const identity = (tenantId: unknown) => buildKey(scoped, { user: { tenantId } }).identity;

        expect(identity(left) === identity(right)).toBe(isDeepStrictEqual(left, right));
        expect(identity(left)).toMatch(KEY_IDENTITY_PATTERN);
      }),
      { numRuns: 2_000 },
    );
  });

  it('every key matches the documented grammar and length bound', () => {
    const name = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._~-]{0,63}$/);
    const fields = (root: string) =>
      fc
        .integer({ min: 0, max: 12 })
        .map((count) => Array.from({ length: count }, (_, index) => `${root}.f${index}`));
    const value = fc.oneof(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 120 }),
      fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 80 }),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.bigInt(),
      fc.date({ noInvalidDate: true }),
    );
    const values = (member: fc.Arbitrary<unknown>) =>
      fc
        .array(member, { minLength: 12, maxLength: 12 })
        .map((list) =>
          Object.fromEntries(
            list.map((member, index) => [
              `f${index}`,
              typeof member === 'string' && member.trim() === '' ? `${member}x` : member,
            ]),
          ),
        );

    fc.assert(
      fc.property(
        name,
        name,
        fc.option(name, { nil: undefined }),
        fields('user'),
        fields('params'),
        fc.integer({ min: 16, max: 64 }),
        values(value),
        values(fc.oneof(value, fc.boolean())),
        anyJson(),
        (namespace, operation, version, scope, target, nibbles, user, params, body) => {
          const spec: KeySpec = {
            namespace,
            operation,
            version,
            scope,
            target,
            fingerprintBits: nibbles * 4,
          };
          const { key, identity, fingerprint, digest } = buildKey(spec, { user, params, body });

          expect(key).toMatch(BUSINESS_KEY_PATTERN);
          expect(key.length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
          expect(identity).toMatch(KEY_IDENTITY_PATTERN);
          expect(key).toBe(`${identity}:${fingerprint}`);
          expect(fingerprint).toBe(digest.slice(0, nibbles));
        },
      ),
      { numRuns: 1_000 },
    );
  });
});

function anyJson(): fc.Arbitrary<unknown> {
  return fc.jsonValue({ maxDepth: 3 });
}
