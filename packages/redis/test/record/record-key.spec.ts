import { recordKeyHash } from '@oncely/core/adapter';
import {
  InvalidRedisOptionError,
  recordKey,
  recordKeyHashOf,
  recordKeyPattern,
} from '@oncely/redis';

/** Redis' own glob (stringmatchlen) for the few features patterns use: `*` and `\` escapes. */
function globMatches(pattern: string, key: string): boolean {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === '\\') source += `\\${pattern[++i]}`;
    else if (char === '*') source += '.*';
    else source += char.replace(/[.+^${}()|[\]?]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's').test(key);
}

describe('record keys', () => {
  const identity = 'shop:order-create:v2:tenant-1:order-9';
  const hash = recordKeyHash(identity);

  it('carry the operation before the key hash, which is the hash tag', () => {
    expect(recordKey(undefined, identity)).toBe(`oncely:shop:order-create:v2:{${hash}}:record`);
    expect(recordKey('app:', identity)).toBe(`app:shop:order-create:v2:{${hash}}:record`);
    expect(recordKeyHashOf(recordKey('app:', identity))).toBe(hash);
    expect(recordKeyHashOf(`oncely:{${hash}}:record`)).toBe(hash);
    expect(recordKeyHashOf(`oncely:{${hash}}:lease`)).toBeUndefined();
  });

  it('encode braces, colons, glob characters and % in hand-written identities, one-to-one', () => {
    const odd = '{a}*:b?[c]\\:v%1:scope';
    const key = recordKey('p:', odd);
    expect(key).toBe(`p:%7Ba%7D%2A:b%3F%5Bc%5D%5C:v%251:{${recordKeyHash(odd)}}:record`);
    expect(key.indexOf('{')).toBe(key.length - 64 - '{}:record'.length);
    expect(recordKey('p:', 'lonely')).toBe(`p:lonely:::{${recordKeyHash('lonely')}}:record`);
    expect(recordKey('p:', 'a:b')).toBe(`p:a:b::{${recordKeyHash('a:b')}}:record`);
    expect(recordKey('p:', 'é:b:c:d')).toBe(`p:%C3%A9:b:c:{${recordKeyHash('é:b:c:d')}}:record`);
  });

  it('match one version or every version of one operation, and nothing else', () => {
    const one = recordKeyPattern('p*[x]:', 'shop:order-create:v2');
    const all = recordKeyPattern('p*[x]:', 'shop:order-create');
    expect(one).toBe('p\\*\\[x\\]:shop:order-create:v2:{*}:record');
    expect(all).toBe('p\\*\\[x\\]:shop:order-create:*:{*}:record');
    const key = (id: string) => recordKey('p*[x]:', id);
    expect(globMatches(one, key(identity))).toBe(true);
    expect(globMatches(all, key(identity))).toBe(true);
    expect(globMatches(all, key('shop:order-create:v1:t:o'))).toBe(true);
    expect(globMatches(one, key('shop:order-create:v1:t:o'))).toBe(false);
    expect(globMatches(all, key('shop:order-create-2:v1:t:o'))).toBe(false);
    expect(globMatches(all, key('shop:order:create:t:o'))).toBe(false);
    expect(globMatches(all, recordKey('pz[x]:', identity))).toBe(false);
  });

  it('refuse an operation that is not ns:op or ns:op:ver, and a prefix with braces', () => {
    expect(() => recordKeyPattern(undefined, 'shop')).toThrow(InvalidRedisOptionError);
    expect(() => recordKeyPattern(undefined, 'a:b:c:d')).toThrow(InvalidRedisOptionError);
    expect(() => recordKey('{x}', identity)).toThrow(InvalidRedisOptionError);
  });
});
