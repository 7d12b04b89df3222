import fc from 'fast-check';
import {
  buildKey,
  canonicalize,
  canonicalKeyInput,
  KeyInputError,
  type KeyContext,
  type KeySpec,
} from '@oncely/core';
import { MAX_INPUT_DEPTH } from '@oncely/core/adapter';

/**
 * `buildKey` writes the canonical input straight from the context. These tests hold it to its
 * definition: `canonicalize` of the context projected onto the input paths (an absent value left
 * out, parents only where a value is present), errors included.
 */
function projected(ctx: KeyContext, input: readonly string[]): unknown {
  const projection = Object.create(null) as Record<string, unknown>;
  for (const path of input) {
    const segments = path.split('.');
    let value: unknown = ctx;
    for (const segment of segments) {
      value =
        value !== null && typeof value === 'object'
          ? (value as Record<string, unknown>)[segment]
          : undefined;
    }
    if (value === undefined) {
      continue;
    }
    let parent = projection;
    for (const segment of segments.slice(0, -1)) {
      parent[segment] ??= Object.create(null);
      parent = parent[segment] as Record<string, unknown>;
    }
    parent[segments.at(-1) as string] = value;
  }
  return projection;
}

type Outcome = { readonly text: string } | { readonly path: string; readonly reason: string };

function outcome(run: () => string): Outcome {
  try {
    return { text: run() };
  } catch (error) {
    if (error instanceof KeyInputError) {
      return { path: error.path, reason: error.reason };
    }
    throw error;
  }
}

function nested(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < levels; level++) {
    value = [value];
  }
  return value;
}

const PATHS = [
  'body',
  'body.amount',
  'body.items.0',
  'body.items.1.sku',
  'body.$tag',
  'body.10',
  'body.9',
  'query.from',
  'query.to',
  'params.id',
  'user.tenantId',
];

const anyValue = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.string({ maxLength: 5 }),
  fc.constantFrom(' trimmed ', 'a\r\nb', 'Bâtiment', 'cafe\u0301', 100, 1.5, Number.NaN),
  fc.date({ noInvalidDate: true }),
  fc.dictionary(fc.constantFrom('amount', 'sku', '$tag', '10', '9'), fc.string(), {
    maxKeys: 3,
  }),
);

const anyContext = fc.record({
  body: fc.oneof(
    fc.constant(undefined),
    fc.record(
      {
        amount: anyValue,
        items: fc.array(fc.record({ sku: anyValue, qty: anyValue }), { maxLength: 3 }),
        $tag: anyValue,
        10: anyValue,
        9: anyValue,
      },
      { requiredKeys: [] },
    ),
  ),
  query: fc.record({ from: anyValue, to: anyValue }, { requiredKeys: [] }),
  params: fc.record({ id: anyValue }),
  user: fc.record({ tenantId: anyValue }),
});

/** Input paths that do not lie within one another, as the spec compiler requires. */
const anyInput = fc
  .subarray(PATHS)
  .map((paths) =>
    paths.filter((path) => !paths.some((other) => other !== path && path.startsWith(`${other}.`))),
  );

describe('canonical input projection', () => {
  it('equals canonicalize of the projected context, errors included', () => {
    fc.assert(
      fc.property(anyInput, anyContext, (input, ctx) => {
        const spec: KeySpec = { namespace: 'p', operation: 'projection', input };

        expect(outcome(() => canonicalKeyInput(spec, ctx as KeyContext))).toEqual(
          outcome(() => canonicalize(projected(ctx as KeyContext, input))),
        );
      }),
      { numRuns: 1_500 },
    );
  });

  it('applies normalisation rules at and below input paths', () => {
    const spec: KeySpec = {
      namespace: 'p',
      operation: 'rules',
      input: ['body.note', 'body.items'],
      normalize: { 'body.note': 'exact', 'body.items.*.name': 'exact' },
      unordered: ['body.items'],
    };
    const ctx = { body: { note: ' a ', items: [{ name: ' z ' }, { name: ' y ', tag: ' t ' }] } };

    expect(canonicalKeyInput(spec, ctx)).toBe(
      '{"body":{"items":[{"name":" y ","tag":"t"},{"name":" z "}],"note":" a "}}',
    );
  });

  it('names the whole context path of a value that has no canonical form', () => {
    const spec: KeySpec = { namespace: 'p', operation: 'errors', input: ['body.items.1'] };

    expect(() => buildKey(spec, { body: { items: [0, { price: Number.NaN }] } })).toThrow(
      expect.objectContaining({ reason: 'non_finite_number', path: 'body.items.1.price' }),
    );
  });

  it('counts nesting from the root of the canonical input, as the projected object does', () => {
    const spec: KeySpec = { namespace: 'p', operation: 'depth', input: ['body.a.b'] };
    const depthOf = (levels: number) => ({ body: { a: { b: nested(levels) } } });

    expect(() => buildKey(spec, depthOf(MAX_INPUT_DEPTH - 3))).not.toThrow();
    expect(() => buildKey(spec, depthOf(MAX_INPUT_DEPTH - 2))).toThrow(
      expect.objectContaining({ reason: 'too_deep' }),
    );
    expect(outcome(() => canonicalKeyInput(spec, depthOf(MAX_INPUT_DEPTH - 2)))).toEqual(
      outcome(() => canonicalize(projected(depthOf(MAX_INPUT_DEPTH - 2), ['body.a.b']))),
    );
  });

  it('finds two input paths naming one property once composed, as the projected object does', () => {
    const spec: KeySpec = {
      namespace: 'p',
      operation: 'nfc',
      input: ['body.caf\u00e9', 'body.cafe\u0301'],
    };

    expect(canonicalKeyInput(spec, { body: { 'caf\u00e9': 1 } })).toBe('{"body":{"café":1}}');
    expect(() => buildKey(spec, { body: { 'caf\u00e9': 1, 'cafe\u0301': 2 } })).toThrow(
      expect.objectContaining({ reason: 'duplicate_key' }),
    );
  });
});
