import { Readable } from 'node:stream';
import { ResultNotSerializableError, ResultTooLargeError } from '@oncely/core';
import { ResultCodec } from '../../src/flight/result-codec.js';

describe('ResultCodec', () => {
  const codec = new ResultCodec();
  const roundTrip = (value: unknown) => codec.decode(codec.encode(value));

  it('round-trips JSON-compatible values unchanged', () => {
    const value = {
      text: 'ü € 😀 \n "quoted"',
      count: 42,
      ratio: -0.5,
      flag: false,
      nothing: null,
      list: [1, 'two', [3], { four: 4 }],
      amount: '100.00',
    };
    expect(roundTrip(value)).toEqual(value);
    for (const scalar of ['', 0, true, null, 'plain']) expect(roundTrip(scalar)).toBe(scalar);
  });

  it('round-trips undefined at the top level and in arrays, and drops undefined properties', () => {
    expect(roundTrip(undefined)).toBeUndefined();
    expect(roundTrip([1, undefined, 3])).toStrictEqual([1, undefined, 3]);
    expect(roundTrip({ kept: 1, dropped: undefined })).toStrictEqual({ kept: 1 });
  });

  it('round-trips Buffer as Buffer and Uint8Array as Uint8Array, nested anywhere', () => {
    const bytes = new Uint8Array([0, 1, 254, 255]);
    const slice = Buffer.from('xxhello worldxx').subarray(2, 13);
    const decoded = roundTrip({
      file: { content: Buffer.from([0, 255, 10]) },
      parts: [bytes, slice],
    });
    const { file, parts } = decoded as { file: { content: Buffer }; parts: [Uint8Array, Buffer] };
    expect(Buffer.isBuffer(file.content)).toBe(true);
    expect([...file.content]).toEqual([0, 255, 10]);
    expect(Buffer.isBuffer(parts[0])).toBe(false);
    expect(parts[0]).toBeInstanceOf(Uint8Array);
    expect([...parts[0]]).toEqual([0, 1, 254, 255]);
    expect(parts[1].toString()).toBe('hello world');
  });

  it('round-trips Dates nested anywhere, invalid ones included', () => {
    const at = new Date('2024-02-29T12:34:56.789Z');
    const decoded = roundTrip({ at, history: [{ at }], top: [at] }) as {
      at: Date;
      history: [{ at: Date }];
      top: [Date];
    };
    expect(decoded.at).toBeInstanceOf(Date);
    expect(decoded.at.getTime()).toBe(at.getTime());
    expect(decoded.history[0].at.getTime()).toBe(at.getTime());
    expect((roundTrip(at) as Date).toISOString()).toBe(at.toISOString());
    expect(Number.isNaN((roundTrip(new Date(Number.NaN)) as Date).getTime())).toBe(true);
  });

  it('round-trips bigint', () => {
    expect(roundTrip({ big: 2n ** 70n })).toEqual({ big: 2n ** 70n });
  });

  it('round-trips Map and Set, keys and items of any kept kind, nested anywhere', () => {
    const value = {
      byId: new Map<unknown, unknown>([
        [1, { at: new Date(7) }],
        ['two', new Set([3n, Buffer.from('x')])],
        [{ composite: true }, [new Map()]],
      ]),
      empty: new Set(),
    };
    const decoded = roundTrip(value) as typeof value;
    expect(decoded).toStrictEqual(value);
    expect([...decoded.byId.keys()]).toEqual([1, 'two', { composite: true }]);
  });

  it('keeps a class instance as JSON would send it: its own enumerable properties', () => {
    class Order {
      constructor(readonly id: string) {}
      get label(): string {
        return `order ${this.id}`;
      }
    }
    expect(roundTrip(new Order('o-1'))).toStrictEqual({ id: 'o-1' });
  });

  it('keeps user objects that look like its own tags', () => {
    const value = { $t: 'date', v: '2024-01-01T00:00:00.000Z', nested: { $t: 'object', v: {} } };
    expect(roundTrip(value)).toStrictEqual(value);
    expect(roundTrip([{ $t: 'undefined' }])).toStrictEqual([{ $t: 'undefined' }]);
  });

  it('keeps a __proto__ key as data', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as object;
    const decoded = roundTrip(value) as Record<string, unknown>;
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(decoded, '__proto__')?.value).toEqual({
      polluted: true,
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('decodes tag-free payloads as parsed, and text that merely looks like a tag as data', () => {
    const plain = { status: 201, body: { kind: 'json', value: { id: 7, tags: ['a'] } } };
    expect(codec.decode(codec.encode(plain))).toStrictEqual(plain);
    const lookalikes = { note: 'a "$t": b', 'key "$t":': { $t: 'x' }, at: new Date(0) };
    expect(roundTrip(lookalikes)).toStrictEqual(lookalikes);
    const withProto = JSON.parse('{"__proto__": {"at": 1}, "when": 1}') as Record<string, unknown>;
    withProto.when = new Date(5);
    const decoded = roundTrip(withProto) as Record<string, unknown>;
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect(decoded.when).toEqual(new Date(5));
    expect(Object.getOwnPropertyDescriptor(decoded, '__proto__')?.value).toEqual({ at: 1 });
  });

  it('stores what toJSON returns, as JSON.stringify does', () => {
    const money = { toJSON: () => '12.50' };
    expect(roundTrip({ money })).toEqual({ money: '12.50' });
  });

  it.each([
    ['a function', { f: () => 1 }, '$.f'],
    ['a symbol', [Symbol('s')], '$[0]'],
    ['NaN', { a: { b: Number.NaN } }, '$.a.b'],
    ['Infinity', Number.POSITIVE_INFINITY, '$'],
    ['a WeakMap', { m: new WeakMap() }, '$.m'],
    ['a Map subclass', { m: new (class Registry extends Map {})() }, '$.m'],
    ['a Float64Array', { f: new Float64Array(1) }, '$.f'],
    ['a function in a Map', { m: new Map([['k', () => 1]]) }, '$.m.<value 0>'],
    ['a stream', { s: Readable.from(['x']) }, '$.s'],
  ])('refuses %s, naming where it is', (_label, value, path) => {
    const attempt = () => codec.encode(value);
    expect(attempt).toThrow(ResultNotSerializableError);
    expect(attempt).toThrow(expect.objectContaining({ path }));
  });

  it('refuses cycles', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(() => codec.encode(cyclic)).toThrow(expect.objectContaining({ path: '$.self' }));
    const shared = { x: 1 };
    expect(roundTrip({ one: shared, two: shared })).toEqual({ one: { x: 1 }, two: { x: 1 } });
  });

  it('refuses a payload above maxBytes, counting UTF-8 bytes', () => {
    const small = new ResultCodec(20);
    expect(small.encode('€€€€€€')).toBe('"€€€€€€"');
    const error = (() => {
      try {
        small.encode('€€€€€€€');
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ResultTooLargeError);
    expect(error).toMatchObject({ code: 'result_too_large', sizeBytes: 23, maxBytes: 20 });
  });
});
