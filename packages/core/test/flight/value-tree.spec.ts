import { ResultNotSerializableError } from '@oncely/core';
import { fromValueTree, toValueTree } from '../../src/flight/value-tree.js';

describe("toValueTree with 'exact' fidelity", () => {
  const roundTrip = (value: unknown) =>
    fromValueTree(JSON.parse(JSON.stringify(toValueTree(value, 'exact'))));

  it('keeps undefined properties, null and undefined apart', () => {
    const decoded = roundTrip({ gone: undefined, none: null, list: [undefined, null] });
    expect(decoded).toStrictEqual({ gone: undefined, none: null, list: [undefined, null] });
    expect(Object.hasOwn(decoded as object, 'gone')).toBe(true);
    expect(roundTrip(null)).toBeNull();
    expect(roundTrip(undefined)).toBeUndefined();
  });

  it('keeps objects without a prototype as plain objects', () => {
    const bare = Object.assign(Object.create(null) as object, { a: 1 });
    expect(roundTrip(bare)).toEqual({ a: 1 });
  });

  class Money {
    constructor(readonly cents: number) {}
  }

  it.each([
    ['a class instance', { total: new Money(5) }, '$.total', 'an instance of Money'],
    ['an object with toJSON', { m: { toJSON: () => 1 } }, '$.m', 'an object with toJSON'],
    ['an instance in a Set', new Set([new Money(1)]), '$.<item 0>', 'an instance of Money'],
  ])('refuses %s, which would come back as a plain object', (_label, value, path, what) => {
    const attempt = () => toValueTree(value, 'exact');
    expect(attempt).toThrow(ResultNotSerializableError);
    expect(attempt).toThrow(
      expect.objectContaining({ path, reason: `${what} would come back as a plain object` }),
    );
  });

  it("keeps what 'json' fidelity would turn into a plain object", () => {
    const tree = toValueTree({ total: new Money(5), m: { toJSON: () => 1 } }, 'json');
    expect(fromValueTree(tree)).toStrictEqual({ total: { cents: 5 }, m: 1 });
  });
});
