import {
  canonicalize,
  KeyIgnore,
  KeySpecError,
  type CanonicalizeOptions,
  KeyInputError,
} from '@oncely/core';
import { MAX_INPUT_DEPTH } from '@oncely/core/adapter';
import { MAX_CANONICAL_INPUT_LENGTH } from '../../src/key/key.constants.js';

function nested(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < levels; level++) {
    value = [value];
  }
  return value;
}

describe('canonicalize', () => {
  it('writes the RFC 8785 example byte for byte', () => {
    const input = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],' +
        '"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
        '"literals":[null,true,false]}',
    ) as unknown;

    expect(canonicalize(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('sorts keys by UTF-16 code units, array indices included', () => {
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '1': 'One',
      '10': 'Ten',
      '2': 'Two',
      '\ud83d\ude00': 'Emoji',
      '\u0080': 'Control',
      '\u00f6': 'o umlaut',
      a: 'a',
    };

    expect(canonicalize(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","10":"Ten","2":"Two","a":"a","\u0080":"Control",' +
        '"ö":"o umlaut","€":"Euro Sign","😀":"Emoji"}',
    );
  });

  it('drops undefined members, keeps null, turns -0 into 0 and undefined elements into null', () => {
    expect(canonicalize({ b: undefined, a: null, z: -0, list: [undefined, 1] })).toBe(
      '{"a":null,"list":[null,1],"z":0}',
    );
  });

  it('leaves decimal strings exactly as they are', () => {
    expect(canonicalize({ amount: '100.00', other: '1e3', zero: '-0' })).toBe(
      '{"amount":"100.00","other":"1e3","zero":"-0"}',
    );
  });

  it('trims, composes to NFC and turns CRLF into LF by default, and nothing else', () => {
    expect(canonicalize('  Cre\u0300me\r\nbru\u0302le\u0301e \t')).toBe('"Crème\\nbrûlée"');
    expect(canonicalize('Java  并发 Mixed Case\r')).toBe('"Java  并发 Mixed Case"');
  });

  it('encodes tagged types as documented', () => {
    const value = {
      big: -12345678901234567890n,
      bytes: Buffer.from([0, 1, 254, 255]),
      map: new Map<unknown, unknown>([
        [2, 'two'],
        ['1', 'one'],
      ]),
      set: new Set(['b', 'a', 'b']),
      when: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)),
    };

    expect(canonicalize(value)).toBe(
      '{"big":{"$bigint":"-12345678901234567890"},"bytes":{"$bytes":"AAH+/w=="},' +
        '"map":{"$map":[["1","one"],[2,"two"]]},"set":{"$set":["a","b"]},' +
        '"when":"2026-01-02T03:04:05.006Z"}',
    );
  });

  it('escapes data keys that start with $ so no data can spell a tag', () => {
    expect(canonicalize({ $bigint: '1' })).toBe('{"$$bigint":"1"}');
    expect(canonicalize({ $$bigint: '1' })).toBe('{"$$$bigint":"1"}');
    expect(canonicalize(1n)).toBe('{"$bigint":"1"}');
    expect(canonicalize({ $bigint: '1' })).not.toBe(canonicalize(1n));
  });

  it('encodes a subarray of bytes, not its whole backing buffer', () => {
    const backing = new Uint8Array([9, 9, 1, 2, 9]);

    expect(canonicalize(backing.subarray(2, 4))).toBe(canonicalize(Buffer.from([1, 2])));
  });

  it('treats an own __proto__ property as data', () => {
    const parsed = JSON.parse('{"__proto__":{"admin":true},"b":1}') as unknown;

    expect(canonicalize(parsed)).toBe('{"__proto__":{"admin":true},"b":1}');
  });

  it('canonicalises a value and its JSON round trip to the same text', () => {
    class Line {
      constructor(
        readonly sku: string,
        readonly qty: number,
      ) {}
    }
    const value = {
      at: new Date(0),
      lines: [new Line('A', 1), undefined, new Line('B', -0)],
      meta: { nested: { deep: ['x', null] } },
      skipped: undefined,
    };

    expect(canonicalize(JSON.parse(JSON.stringify(value)))).toBe(canonicalize(value));
  });

  it('applies field rules relative to the value, the most specific one winning', () => {
    const options = {
      normalize: {
        note: 'exact' as const,
        'items.*.code': (text: string) => text.toUpperCase(),
        'items.0.code': 'exact' as const,
      },
      unordered: ['tags'],
    };
    const value = {
      note: { inner: ' kept ' },
      items: [{ code: ' ab ' }, { code: 'cd' }],
      tags: ['b', 'a'],
      free: ' trimmed ',
    };

    expect(canonicalize(value, options)).toBe(
      '{"free":"trimmed","items":[{"code":" ab "},{"code":"CD"}],"note":{"inner":" kept "},"tags":["a","b"]}',
    );
  });

  it('sorts nested unordered arrays by canonical text, keeping duplicates', () => {
    const options = { unordered: ['*'] };

    expect(canonicalize({ a: [{ y: 1 }, { x: 2 }, 3, 'x', 3] }, options)).toBe(
      '{"a":["x",3,3,{"x":2},{"y":1}]}',
    );
  });

  it('honours @KeyIgnore() on class instances only', () => {
    class Dto {
      @KeyIgnore() traceId = 'abc';
      amount = 1;
    }

    expect(canonicalize(new Dto())).toBe('{"amount":1}');
    expect(canonicalize({ traceId: 'abc', amount: 1 })).toBe('{"amount":1,"traceId":"abc"}');
  });

  it('reports where a non-finite number sits', () => {
    const run = () => canonicalize({ a: [{ b: Number.NEGATIVE_INFINITY }] });

    expect(run).toThrow(KeyInputError);
    expect(run).toThrow(expect.objectContaining({ reason: 'non_finite_number', path: 'a.0.b' }));
  });

  it('rejects a cycle through an array, a Map and a Set', () => {
    const list: unknown[] = [];
    list.push({ list });
    const map = new Map<string, unknown>();
    map.set('self', map);
    const set = new Set<unknown>();
    set.add(set);

    for (const value of [list, map, set]) {
      expect(() => canonicalize(value)).toThrow(expect.objectContaining({ reason: 'cycle' }));
    }
  });

  it.each([
    ['a function', () => 1],
    ['a symbol', Symbol('s')],
    ['a RegExp', /x/],
    ['a Promise', Promise.resolve(1)],
    ['a WeakMap', new WeakMap()],
    ['an Error', new Error('x')],
    ['a Float64Array', new Float64Array(1)],
    ['an invalid Date', new Date(Number.NaN)],
    [
      'a class with its own toStringTag (e.g. Decimal)',
      new (class Decimal {
        readonly [Symbol.toStringTag] = 'Decimal';
        d = [1];
      })(),
    ],
  ])('rejects %s with unsupported_type', (_, member) => {
    expect(() => canonicalize({ member })).toThrow(
      expect.objectContaining({ reason: 'unsupported_type', path: 'member' }),
    );
  });

  it('rejects undefined at the root', () => {
    expect(() => canonicalize(undefined)).toThrow(
      expect.objectContaining({ reason: 'unsupported_type', path: '(root)' }),
    );
  });

  it(`accepts ${MAX_INPUT_DEPTH} levels of nesting and rejects one more`, () => {
    expect(() => canonicalize(nested(MAX_INPUT_DEPTH))).not.toThrow();
    expect(() => canonicalize(nested(MAX_INPUT_DEPTH + 1))).toThrow(
      expect.objectContaining({ reason: 'too_deep' }),
    );
  });

  it(`rejects canonical text longer than ${MAX_CANONICAL_INPUT_LENGTH} characters`, () => {
    const fits = 'x'.repeat(MAX_CANONICAL_INPUT_LENGTH - 2);

    expect(canonicalize(fits)).toHaveLength(MAX_CANONICAL_INPUT_LENGTH);
    expect(() => canonicalize(`${fits}x`)).toThrow(
      expect.objectContaining({ reason: 'too_large' }),
    );
    expect(() => canonicalize(Array.from({ length: 300_000 }, () => 1000))).toThrow(
      expect.objectContaining({ reason: 'too_large' }),
    );
  });

  it('rejects lone surrogates in values and keys', () => {
    expect(() => canonicalize({ text: 'a\ud800b' })).toThrow(
      expect.objectContaining({ reason: 'malformed_unicode', path: 'text' }),
    );
    expect(() => canonicalize({ ['k\udc00']: 1 })).toThrow(
      expect.objectContaining({ reason: 'malformed_unicode' }),
    );
    expect(() => canonicalize('\ud800', { normalize: { x: 'exact' } })).toThrow(KeyInputError);
  });

  it('rejects two keys that become equal under NFC', () => {
    const value = { ['e\u0301']: 1, ['\u00e9']: 2 };

    expect(() => canonicalize(value)).toThrow(
      expect.objectContaining({ reason: 'duplicate_key', path: 'é' }),
    );
  });

  it('rejects two Map keys with the same canonical form, and merges equal Set elements', () => {
    const map = new Map<unknown, unknown>([
      [{ id: 1 }, 'a'],
      [{ id: 1 }, 'b'],
    ]);

    expect(() => canonicalize(map)).toThrow(expect.objectContaining({ reason: 'duplicate_key' }));
    expect(canonicalize(new Set([{ id: 1 }, { id: 1 }]))).toBe('{"$set":[{"id":1}]}');
  });

  it('rejects a custom normaliser that returns something other than a string', () => {
    const options = { normalize: { note: (() => 42) as unknown as (value: string) => string } };

    expect(() => canonicalize({ note: 'x' }, options)).toThrow(
      expect.objectContaining({ reason: 'invalid_normalizer_result', path: 'note' }),
    );
  });

  it('rejects malformed options with KeySpecError', () => {
    const unknownRule = { normalize: { note: 'lower' } } as unknown as CanonicalizeOptions;

    expect(() => canonicalize({}, unknownRule)).toThrow(KeySpecError);
    expect(() => canonicalize({}, { unordered: ['a..b'] })).toThrow(KeySpecError);
  });

  it('gives errors a stable code and a message that says how to fix them', () => {
    const error = (() => {
      try {
        canonicalize({ price: Number.NaN });
      } catch (caught) {
        return caught as KeyInputError;
      }
      throw new Error('canonicalize accepted NaN');
    })();

    expect(error.code).toBe('key_input_invalid');
    expect(error.name).toBe('KeyInputError');
    expect(error.message).toMatch(/price .*NaN.*Reject it during validation/);
  });
});
