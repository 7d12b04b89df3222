import { canonicalize, KeyIgnore } from '@oncely/core';
import { recordLayout, type RecordLayout } from '../../src/key/record-layout.js';
import { referenceCanonicalize } from './reference-canonical.js';

const NONE: ReadonlySet<string> = new Set();

describe('record layouts', () => {
  it('keeps the 8 most recently used layouts of a prototype and drops the least recently used', () => {
    const layouts: RecordLayout[] = [];
    const shapes = Array.from({ length: 9 }, (_, index) => [`k${index}`, 'shared']);
    const made = shapes.slice(0, 8).map((keys) => recordLayout(layouts, keys, NONE));

    expect(recordLayout(layouts, ['k0', 'shared'], NONE)).toBe(made[0]);
    recordLayout(layouts, ['k8', 'shared'], NONE);

    expect(layouts.map((layout) => layout.keys[0])).toEqual([
      'k8',
      'k0',
      'k7',
      'k6',
      'k5',
      'k4',
      'k3',
      'k2',
    ]);
    expect(recordLayout(layouts, ['k1', 'shared'], NONE)).not.toBe(made[1]);
    expect(layouts).toHaveLength(8);
  });

  it('keeps no layout of an object with more than 64 keys, or with keys needing NFC or escaping', () => {
    const layouts: RecordLayout[] = [];
    const wide = Array.from({ length: 65 }, (_, index) => `k${index}`);

    expect(recordLayout(layouts, wide, NONE)?.members).toHaveLength(65);
    expect(recordLayout(layouts, ['cafe\u0301'], NONE)).toBeUndefined();
    expect(recordLayout(layouts, ['say "hi"'], NONE)).toBeUndefined();
    expect(layouts).toEqual([]);
  });

  it('orders members by key, writes their name tokens once, and leaves ignored keys out', () => {
    const layout = recordLayout([], ['b', '$tag', 'a', 'skip', 'é'], new Set(['skip']));

    expect(layout?.members.map((member) => [member.index, member.key])).toEqual([
      [1, '$tag'],
      [2, 'a'],
      [0, 'b'],
      [4, 'é'],
    ]);
    expect(layout?.members[0]).toEqual({
      index: 1,
      key: '$tag',
      first: '{"$$tag":',
      firstString: '{"$$tag":"',
      later: ',"$$tag":',
      laterString: ',"$$tag":"',
      afterString: '","$$tag":',
      afterStringString: '","$$tag":"',
    });
  });

  it('canonicalises instances of one class with changing key sets as the reference does', () => {
    class Sparse {
      [key: string]: unknown;
    }
    const shapes = Array.from({ length: 12 }, (_, index) =>
      Object.fromEntries(
        Array.from({ length: (index % 5) + 1 }, (__, member) => [
          `f${(index * 7 + member * 3) % 11}`,
          member === 0 ? undefined : `${index}-${member}`,
        ]),
      ),
    );

    for (let pass = 0; pass < 3; pass++) {
      for (const fields of shapes) {
        const dto = Object.assign(new Sparse(), fields);

        expect(canonicalize(dto)).toBe(referenceCanonicalize(dto));
        expect(canonicalize({ ...fields })).toBe(referenceCanonicalize({ ...fields }));
      }
    }
  });

  it('takes a @KeyIgnore() added after instances were canonicalised into account', () => {
    class Late {
      amount = '10.00';
      sentAt = '2026-01-01T00:00:00Z';
    }

    expect(canonicalize(new Late())).toBe('{"amount":"10.00","sentAt":"2026-01-01T00:00:00Z"}');
    KeyIgnore()(Late.prototype, 'sentAt');

    expect(canonicalize(new Late())).toBe('{"amount":"10.00"}');
  });

  it('reads members by name when a getter deletes a later property', () => {
    const value: Record<string, unknown> = {};
    Object.defineProperty(value, 'a', {
      enumerable: true,
      get() {
        delete value.b;
        return 'first';
      },
    });
    Object.assign(value, { b: 'deleted', c: 'kept' });

    expect(canonicalize(value)).toBe('{"a":"first","c":"kept"}');
  });

  it('still rejects an instance of a known plain class that tags itself as another type', () => {
    class Amount {
      value = '1.00';
    }
    const tagged = Object.assign(new Amount(), { [Symbol.toStringTag]: 'Decimal' });

    expect(canonicalize(new Amount())).toBe('{"value":"1.00"}');
    expect(() => canonicalize(tagged)).toThrow(
      expect.objectContaining({ reason: 'unsupported_type', found: 'a Decimal' }),
    );
  });

  it('writes Latin-1 text unchanged: no Latin-1 character decomposes or composes', () => {
    for (let first = 0xa0; first <= 0xff; first++) {
      for (let second = 0x21; second <= 0xff; second++) {
        const text = `${String.fromCharCode(first)}x${String.fromCharCode(second)}`;

        expect(text.normalize('NFC')).toBe(text);
        expect(canonicalize({ [text]: text })).toBe(referenceCanonicalize({ [text]: text }));
      }
    }
  });
});
