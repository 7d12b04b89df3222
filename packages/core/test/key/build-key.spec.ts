import {
  BUSINESS_KEY_PATTERN,
  buildKey,
  KeyIgnore,
  KeyInputError,
  MissingKeyFieldError,
  type KeyContext,
  type KeySpec,
} from '@oncely/core';
import { MAX_KEY_LENGTH } from '../../src/key/key.constants.js';

const spec: KeySpec = {
  namespace: 'shop',
  operation: 'order-create',
  scope: ['user.tenantId', 'user.id'],
  target: 'params.cartId',
};

function ctx(overrides: Partial<KeyContext> = {}): KeyContext {
  return {
    user: { tenantId: 'tenant-1', id: 'user-1001' },
    params: { cartId: 'cart-77' },
    body: { amount: '100.00', currency: 'EUR', note: 'leave at the door' },
    headers: { 'x-request-id': 'req-1', traceparent: '00-aaaa-01', date: 'Mon, 1 Jan 2026' },
    ...overrides,
  };
}

const keyOf = (context: KeyContext, keySpec: KeySpec = spec) => buildKey(keySpec, context).key;
const bodyKey = (body: unknown, keySpec: KeySpec = spec) => keyOf(ctx({ body }), keySpec);

function expectAllDistinct(keys: readonly string[]): void {
  expect(new Set(keys).size).toBe(keys.length);
}

describe('buildKey', () => {
  it('formats namespace:operation:version:scope:target:fingerprint', () => {
    const result = buildKey(spec, ctx());

    expect(result.identity).toBe('shop:order-create:v1:tenant-1,user-1001:cart-77');
    expect(result.key).toBe(`${result.identity}:${result.fingerprint}`);
    expect(result.fingerprint).toBe(result.digest.slice(0, 32));
    expect(result.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(result.key).toMatch(BUSINESS_KEY_PATTERN);
  });

  it('gives identical requests the same key', () => {
    expect(keyOf(ctx())).toBe(keyOf(ctx()));
  });

  it('gives a different operation a different key', () => {
    expect(keyOf(ctx(), { ...spec, operation: 'order-quote' })).not.toBe(keyOf(ctx()));
  });

  it('gives a different tenant a different key', () => {
    const other = ctx({ user: { tenantId: 'tenant-2', id: 'user-1001' } });

    expect(keyOf(other)).not.toBe(keyOf(ctx()));
  });

  it('gives a different user a different key', () => {
    const other = ctx({ user: { tenantId: 'tenant-1', id: 'user-1002' } });

    expect(keyOf(other)).not.toBe(keyOf(ctx()));
  });

  it('gives a different target a different key', () => {
    expect(keyOf(ctx({ params: { cartId: 'cart-78' } }))).not.toBe(keyOf(ctx()));
  });

  it('gives different core input a different key, with the same identity', () => {
    const changed = ctx({ body: { amount: '100.01', currency: 'EUR', note: 'leave at the door' } });

    expect(keyOf(changed)).not.toBe(keyOf(ctx()));
    expect(buildKey(spec, changed).identity).toBe(buildKey(spec, ctx()).identity);
  });

  it('gives the same key when only leading or trailing whitespace differs', () => {
    const padded = { amount: ' 100.00', currency: 'EUR\t', note: '\n leave at the door  ' };

    expect(bodyKey(padded)).toBe(keyOf(ctx()));
  });

  it('gives the same key when target values differ only by outer whitespace', () => {
    expect(keyOf(ctx({ params: { cartId: '\tcart-77 ' } }))).toBe(keyOf(ctx()));
  });

  it('keeps scope values that differ only by outer whitespace apart', () => {
    const tenant = (tenantId: string) => keyOf(ctx({ user: { tenantId, id: 'user-1001' } }));

    expectAllDistinct([tenant('acme'), tenant('acme '), tenant(' acme'), tenant('acme\n')]);
    expect(buildKey(spec, ctx({ user: { tenantId: 'acme ', id: 'u' } })).identity).toBe(
      'shop:order-create:v1:acme%20,u:cart-77',
    );
  });

  it('keeps NFC and NFD spellings of a scope value apart', () => {
    const nfc = 'José Müller'.normalize('NFC');
    const nfd = nfc.normalize('NFD');
    const tenant = (tenantId: string) => keyOf(ctx({ user: { tenantId, id: 'user-1001' } }));

    expect(tenant(nfd)).not.toBe(tenant(nfc));
    expect(buildKey(spec, ctx({ user: { tenantId: nfc, id: 'u' } })).identity).toBe(
      'shop:order-create:v1:Jos%C3%A9%20M%C3%BCller,u:cart-77',
    );
  });

  it('keeps a number scope and the string with its digits apart, and bigints and Dates too', () => {
    const tenant = (tenantId: unknown) => keyOf(ctx({ user: { tenantId, id: 'user-1001' } }));

    expectAllDistinct([
      tenant(7),
      tenant('7'),
      tenant(7n),
      tenant('%N7'),
      tenant(new Date(0)),
      tenant('1970-01-01T00:00:00.000Z'),
    ]);
  });

  it('keeps a plain string scope in canonical form byte-identical to earlier releases', () => {
    const identity = (tenantId: string, id: string) =>
      buildKey(spec, ctx({ user: { tenantId, id } })).identity;

    expect(identity('acme', 'user-1001')).toBe('shop:order-create:v1:acme,user-1001:cart-77');
    expect(identity('租户-1', 'José')).toBe(
      'shop:order-create:v1:%E7%A7%9F%E6%88%B7-1,Jos%C3%A9:cart-77',
    );
    expect(identity('t', 'y'.repeat(65))).toBe(
      'shop:order-create:v1:t,%~c4a2649e068ab18f0b332492f541ae0b:cart-77',
    );
  });

  it('refuses a boolean scope value with KeyInputError naming the field', () => {
    for (const tenantId of [false, true]) {
      expect(() => buildKey(spec, ctx({ user: { tenantId, id: 'user-1001' } }))).toThrow(
        expect.objectContaining({
          code: 'key_input_invalid',
          reason: 'boolean_scope_value',
          path: 'user.tenantId',
        }),
      );
    }
  });

  it('gives a different version a different key', () => {
    expect(keyOf(ctx(), { ...spec, version: 'v2' })).not.toBe(keyOf(ctx()));
    expect(keyOf(ctx(), { ...spec, version: 'v1' })).toBe(keyOf(ctx()));
  });

  it('ignores trace ids and arrival times in headers', () => {
    const retried = ctx({
      headers: { 'x-request-id': 'req-2', traceparent: '00-bbbb-01', date: 'Tue, 2 Jan 2026' },
    });

    expect(keyOf(retried)).toBe(keyOf(ctx()));
  });

  it('raises MissingKeyFieldError naming the path when a required field is absent', () => {
    const build = () => buildKey(spec, ctx({ user: { id: 'user-1001' } }));

    expect(build).toThrow(MissingKeyFieldError);
    expect(build).toThrow(expect.objectContaining({ field: 'user.tenantId', segment: 'scope' }));
  });

  it('raises MissingKeyFieldError when a required field is null or an empty string', () => {
    for (const tenantId of [null, '', '   ']) {
      const build = () => buildKey(spec, ctx({ user: { tenantId, id: 'user-1001' } }));

      expect(build).toThrow(
        expect.objectContaining({ code: 'key_field_missing', field: 'user.tenantId' }),
      );
    }
  });

  it('raises MissingKeyFieldError for a missing target and for a whole missing context part', () => {
    expect(() => buildKey(spec, ctx({ params: {} }))).toThrow(
      expect.objectContaining({ field: 'params.cartId', segment: 'target' }),
    );
    expect(() => buildKey(spec, { body: {} })).toThrow(MissingKeyFieldError);
  });

  it('tells a client to send a missing request field, and says a principal field is set server-side', () => {
    const message = (context: KeyContext, keySpec: KeySpec = spec) => {
      try {
        buildKey(keySpec, context);
      } catch (error) {
        return (error as MissingKeyFieldError).message;
      }
      throw new Error('expected MissingKeyFieldError');
    };

    expect(message(ctx({ params: {} }))).toBe(
      'The key field params.cartId (target of shop:order-create:v1) is missing, null or empty. Send it with the request; if a fixed fallback is genuinely safe, declare the path as { path, optional: true, default } in the key spec.',
    );
    expect(message(ctx({ user: { id: 'user-1001' } }))).toBe(
      "The key field user.tenantId (scope of shop:order-create:v1) comes from the request's authenticated principal, which has no tenantId (or it is null or empty). The principal is resolved on the server, not sent by the client: the authentication step that sets it (a guard, or resolveUser with Express) must give it tenantId.",
    );
    const anonymous = ctx();
    delete (anonymous as { user?: unknown }).user;
    expect(message(anonymous)).toBe(
      "The key field user.tenantId (scope of shop:order-create:v1) comes from the request's authenticated principal, and the request has none. The principal is resolved on the server, not sent by the client: an authentication step (a guard, or resolveUser with Express) must set it before oncely builds the key.",
    );
    const tenantOf = () => undefined;
    expect(message(ctx(), { ...spec, scope: tenantOf })).toBe(
      'The key field tenantOf() (scope of shop:order-create:v1) is computed on the server from the request and came out missing, null or empty. Make the function return a value for every request the route accepts.',
    );
  });

  it('uses the declared default of an optional field, and only then', () => {
    const withLocale: KeySpec = {
      ...spec,
      target: ['params.cartId', { path: 'query.locale', optional: true, default: 'en' }],
    };

    const absent = keyOf(ctx(), withLocale);
    const explicitDefault = keyOf(ctx({ query: { locale: 'en' } }), withLocale);
    const other = keyOf(ctx({ query: { locale: 'fr' } }), withLocale);

    expect(absent).toBe(explicitDefault);
    expect(other).not.toBe(absent);
    expect(buildKey(withLocale, ctx()).identity).toBe(
      'shop:order-create:v1:tenant-1,user-1001:cart-77,en',
    );
  });

  it('gives the same key whatever the JSON property order', () => {
    const reordered = { note: 'leave at the door', currency: 'EUR', amount: '100.00' };

    expect(bodyKey(reordered)).toBe(keyOf(ctx()));
  });

  it('keeps "100.00", "10000" and 100 apart', () => {
    expectAllDistinct([
      bodyKey({ amount: '100.00' }),
      bodyKey({ amount: '10000' }),
      bodyKey({ amount: 100 }),
      bodyKey({ amount: '100' }),
      bodyKey({ amount: 10000 }),
    ]);
  });

  it('keeps "Java 并发" and "Java并发" apart', () => {
    expect(bodyKey({ topic: 'Java 并发' })).not.toBe(bodyKey({ topic: 'Java并发' }));
  });

  it('gives NFC and NFD spellings of the same text the same key', () => {
    const nfc = 'Crème brûlée, São Paulo, 한국어'.normalize('NFC');
    const nfd = nfc.normalize('NFD');
    expect(nfd).not.toBe(nfc);

    expect(bodyKey({ dish: nfd })).toBe(bodyKey({ dish: nfc }));
    expect(bodyKey({ [nfd]: 1 })).toBe(bodyKey({ [nfc]: 1 }));
    expect(keyOf(ctx({ params: { cartId: nfd } }))).toBe(keyOf(ctx({ params: { cartId: nfc } })));
  });

  it('gives CRLF and LF line endings the same key', () => {
    expect(bodyKey({ text: 'line one\r\nline two\r\n' })).toBe(
      bodyKey({ text: 'line one\nline two\n' }),
    );
  });

  it('keeps a lone CR and inner whitespace and case apart', () => {
    expectAllDistinct([
      bodyKey({ text: 'a\rb' }),
      bodyKey({ text: 'a\nb' }),
      bodyKey({ text: 'a  b' }),
      bodyKey({ text: 'a b' }),
      bodyKey({ text: 'A b' }),
    ]);
  });

  it('does not let a separator inside a value forge another split of values', () => {
    const twoScopes = (tenantId: string, id: string) =>
      buildKey(spec, ctx({ user: { tenantId, id } })).identity;

    expectAllDistinct([
      twoScopes('a:b', 'c'),
      twoScopes('a', 'b:c'),
      twoScopes('a,b', 'c'),
      twoScopes('a', 'b,c'),
      twoScopes('a%2Cb', 'c'),
      twoScopes('a%3Ab', 'c'),
    ]);
    expect(twoScopes('a:b', 'c')).toBe('shop:order-create:v1:a%3Ab,c:cart-77');
    expect(twoScopes('a,b', 'c')).toBe('shop:order-create:v1:a%2Cb,c:cart-77');
    expect(twoScopes('a%2Cb', 'c')).toBe('shop:order-create:v1:a%252Cb,c:cart-77');
  });

  it('does not let scope and target values trade a colon between them', () => {
    const identity = (id: string, cartId: string) =>
      buildKey(spec, ctx({ user: { tenantId: 't', id }, params: { cartId } })).identity;

    expect(identity('u:x', 'y')).not.toBe(identity('u', 'x:y'));
    expect(identity('u', 'x:y').split(':')).toHaveLength(5);
  });

  it('keeps values containing , { } % and their escaped spellings apart', () => {
    const values = ['a,b', 'a{b', 'a}b', 'a%b', 'a%2Cb', 'a%7Bb', 'a%7Db', 'a%25b', 'ab', '{a:b}'];
    const keys = values.map((cartId) => keyOf(ctx({ params: { cartId } })));

    expectAllDistinct(keys);
    for (const key of keys) {
      expect(key).toMatch(BUSINESS_KEY_PATTERN);
    }
  });

  it('keeps null, a missing property and "null" apart', () => {
    expectAllDistinct([bodyKey({ coupon: null }), bodyKey({}), bodyKey({ coupon: 'null' })]);
    expect(bodyKey({ coupon: undefined })).toBe(bodyKey({}));
  });

  it('keeps 1, "1", true and "true" apart', () => {
    expectAllDistinct([
      bodyKey({ flag: 1 }),
      bodyKey({ flag: '1' }),
      bodyKey({ flag: true }),
      bodyKey({ flag: 'true' }),
    ]);
  });

  it('canonicalises nested objects at every depth', () => {
    const nested = { order: { address: { city: 'Lyon', zip: '69001' }, lines: [{ sku: 'A' }] } };
    const reordered = { order: { lines: [{ sku: 'A' }], address: { zip: '69001', city: 'Lyon' } } };
    const changed = { order: { address: { city: 'Lyon', zip: '69002' }, lines: [{ sku: 'A' }] } };

    expect(bodyKey(reordered)).toBe(bodyKey(nested));
    expect(bodyKey(changed)).not.toBe(bodyKey(nested));
  });

  it('keeps array order significant unless the field is declared unordered', () => {
    const unorderedSpec: KeySpec = { ...spec, unordered: ['body.tags', 'body.items.*.codes'] };
    const first = { tags: ['red', 'blue'], items: [{ codes: ['x', 'y'] }, { codes: ['z'] }] };
    const second = { tags: ['blue', 'red'], items: [{ codes: ['y', 'x'] }, { codes: ['z'] }] };
    const swappedItems = {
      tags: ['red', 'blue'],
      items: [{ codes: ['z'] }, { codes: ['x', 'y'] }],
    };

    expect(bodyKey(second)).not.toBe(bodyKey(first));
    expect(bodyKey(second, unorderedSpec)).toBe(bodyKey(first, unorderedSpec));
    expect(bodyKey(swappedItems, unorderedSpec)).not.toBe(bodyKey(first, unorderedSpec));
    expect(bodyKey({ tags: ['red', 'red', 'blue'] }, unorderedSpec)).not.toBe(
      bodyKey({ tags: ['red', 'blue'] }, unorderedSpec),
    );
  });

  it('encodes Date as its ISO-8601 UTC instant', () => {
    const instant = new Date('2026-07-17T10:00:00+08:00');

    expect(bodyKey({ at: instant })).toBe(bodyKey({ at: new Date('2026-07-17T02:00:00Z') }));
    expect(bodyKey({ at: instant })).toBe(bodyKey({ at: '2026-07-17T02:00:00.000Z' }));
    expect(bodyKey({ at: instant })).not.toBe(bodyKey({ at: new Date('2026-07-17T02:00:01Z') }));
    expect(bodyKey({ at: instant })).not.toBe(bodyKey({ at: instant.getTime() }));
  });

  it('tags bigint so it differs from the number and the string it spells', () => {
    expectAllDistinct([
      bodyKey({ id: 10n }),
      bodyKey({ id: 10 }),
      bodyKey({ id: '10' }),
      bodyKey({ id: { $bigint: '10' } }),
    ]);
    expect(bodyKey({ id: 2n ** 70n })).not.toBe(bodyKey({ id: 2n ** 70n + 1n }));
  });

  it('tags Buffer and Uint8Array bytes so they differ from strings and arrays', () => {
    const bytes = Buffer.from('hello');

    expect(bodyKey({ file: new Uint8Array(bytes) })).toBe(bodyKey({ file: bytes }));
    expectAllDistinct([
      bodyKey({ file: bytes }),
      bodyKey({ file: bytes.toString('base64') }),
      bodyKey({ file: 'hello' }),
      bodyKey({ file: [...bytes] }),
      bodyKey({ file: Buffer.from('hellp') }),
    ]);
  });

  it('tags Map: entry order does not matter, and it differs from an object', () => {
    const map = new Map<unknown, unknown>([
      ['b', 2],
      ['a', 1],
    ]);
    const reordered = new Map<unknown, unknown>([
      ['a', 1],
      ['b', 2],
    ]);

    expect(bodyKey({ prices: reordered })).toBe(bodyKey({ prices: map }));
    expectAllDistinct([
      bodyKey({ prices: map }),
      bodyKey({ prices: { a: 1, b: 2 } }),
      bodyKey({ prices: new Map([['a', 1]]) }),
      bodyKey({ prices: new Map<unknown, unknown>([[1, 'a']]) }),
      bodyKey({ prices: new Map<unknown, unknown>([['1', 'a']]) }),
    ]);
  });

  it('tags Set: order and duplicates do not matter, and it differs from an array', () => {
    expect(bodyKey({ roles: new Set(['b', 'a']) })).toBe(bodyKey({ roles: new Set(['a', 'b']) }));
    expectAllDistinct([
      bodyKey({ roles: new Set(['a', 'b']) }),
      bodyKey({ roles: ['a', 'b'] }),
      bodyKey({ roles: new Set(['a']) }),
      bodyKey({ roles: new Set([1, '1']) }),
    ]);
  });

  it('rejects cycles with KeyInputError', () => {
    const body: Record<string, unknown> = { name: 'loop' };
    body.self = body;

    expect(() => bodyKey(body)).toThrow(
      expect.objectContaining({ reason: 'cycle', path: 'body.self' }),
    );
  });

  it('accepts a shared, acyclic reference', () => {
    const address = { city: 'Lyon' };

    expect(bodyKey({ billing: address, shipping: address })).toBe(
      bodyKey({ billing: { city: 'Lyon' }, shipping: { city: 'Lyon' } }),
    );
  });

  it('rejects NaN and Infinity with KeyInputError naming the field', () => {
    expect(() => bodyKey({ items: [{ price: Number.NaN }] })).toThrow(
      expect.objectContaining({ reason: 'non_finite_number', path: 'body.items.0.price' }),
    );
    expect(() => bodyKey({ price: Infinity })).toThrow(KeyInputError);
    expect(() => keyOf(ctx({ params: { cartId: Number.NaN } }))).toThrow(
      expect.objectContaining({ reason: 'non_finite_number', path: 'params.cartId' }),
    );
  });

  it('honours @KeyIgnore() on the DTO, nested DTOs and subclasses', () => {
    class LineDto {
      sku = 'A-1';
      @KeyIgnore() addedAt = 'client clock 1';
    }
    class OrderDto {
      amount = '10.00';
      @KeyIgnore() clientRequestTime = '10:00:01';
      lines = [new LineDto()];
    }
    class GiftOrderDto extends OrderDto {
      message = 'happy birthday';
      @KeyIgnore() wrappingHint = 'blue';
    }
    const base = new OrderDto();
    const retried = Object.assign(new OrderDto(), {
      clientRequestTime: '10:00:03',
      lines: [Object.assign(new LineDto(), { addedAt: 'client clock 2' })],
    });
    const gift = new GiftOrderDto();
    const giftRetried = Object.assign(new GiftOrderDto(), {
      clientRequestTime: 'later',
      wrappingHint: 'red',
    });

    expect(bodyKey(retried)).toBe(bodyKey(base));
    expect(bodyKey(Object.assign(new OrderDto(), { amount: '10.01' }))).not.toBe(bodyKey(base));
    expect(bodyKey(giftRetried)).toBe(bodyKey(gift));
    expect(bodyKey(Object.assign(new GiftOrderDto(), { message: 'hi' }))).not.toBe(bodyKey(gift));
    expect(bodyKey({ ...base })).not.toBe(bodyKey(base));
  });

  it.each([64, 128, 256])('keeps %i bits of fingerprint', (fingerprintBits) => {
    const result = buildKey({ ...spec, fingerprintBits }, ctx());

    expect(result.fingerprint).toHaveLength(fingerprintBits / 4);
    expect(result.fingerprint).toBe(result.digest.slice(0, fingerprintBits / 4));
    expect(result.key.split(':').at(-1)).toBe(result.fingerprint);
    expect(result.key).toMatch(BUSINESS_KEY_PATTERN);
  });

  it('defaults to 128 bits of fingerprint', () => {
    expect(buildKey(spec, ctx()).fingerprint).toHaveLength(32);
  });

  it('replaces a value longer than 64 characters by a marked hash that no literal can forge', () => {
    const long = 'x'.repeat(65);
    const result = buildKey(spec, ctx({ params: { cartId: long } }));
    const target = result.identity.split(':')[4] as string;

    expect(target).toMatch(/^%~[0-9a-f]{32}$/);
    expect(keyOf(ctx({ params: { cartId: `${long}y` } }))).not.toBe(result.key);
    expect(keyOf(ctx({ params: { cartId: target } }))).not.toBe(result.key);
    expect(buildKey(spec, ctx({ params: { cartId: 'x'.repeat(64) } })).identity).toContain(
      `:${'x'.repeat(64)}`,
    );
  });

  it('measures the 64-character limit after escaping', () => {
    const identity = (cartId: string) => buildKey(spec, ctx({ params: { cartId } })).identity;

    expect(identity('é'.repeat(10))).toContain(':%C3%A9'); // 60 characters escaped
    expect(identity('é'.repeat(11))).toMatch(/:%~[0-9a-f]{32}$/); // 66 characters escaped
  });

  it(`bounds the total key length to ${MAX_KEY_LENGTH} by hashing whole segments`, () => {
    const manyFields: KeySpec = {
      namespace: 'n'.repeat(64),
      operation: 'o'.repeat(64),
      version: 'v'.repeat(64),
      scope: ['user.a', 'user.b', 'user.c', 'user.d', 'user.e'],
      target: ['params.a', 'params.b', 'params.c', 'params.d', 'params.e'],
      fingerprintBits: 256,
    };
    const values = {
      a: 'a'.repeat(64),
      b: 'b'.repeat(64),
      c: 'c'.repeat(64),
      d: 'd'.repeat(64),
      e: 'e',
    };
    const result = buildKey(manyFields, { user: values, params: values });
    const [, , , scope, target] = result.identity.split(':');

    expect(result.key.length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
    expect(result.key).toMatch(BUSINESS_KEY_PATTERN);
    expect(scope).toMatch(/^%_[0-9a-f]{32}$/);
    expect(target).toMatch(/^%_[0-9a-f]{32}$/);
    const otherValues = { ...values, e: 'f' };
    expect(buildKey(manyFields, { user: values, params: otherValues }).key).not.toBe(result.key);
  });

  it('hashes only the longer segment when that is enough', () => {
    const wide: KeySpec = {
      ...spec,
      scope: Array.from({ length: 8 }, (_, index) => `user.f${index}`),
    };
    const user = Object.fromEntries(
      Array.from({ length: 8 }, (_, index) => [`f${index}`, `${index}`.repeat(60)]),
    );
    const identity = buildKey(wide, ctx({ user })).identity;

    expect(identity).toMatch(/^shop:order-create:v1:%_[0-9a-f]{32}:cart-77$/);
  });

  it('leaves a segment with no declared sources empty', () => {
    const noScope: KeySpec = {
      namespace: 'jobs',
      operation: 'daily-settlement',
      target: 'params.day',
    };
    const noTarget: KeySpec = {
      namespace: 'jobs',
      operation: 'daily-settlement',
      scope: 'params.day',
    };
    const context = { params: { day: '2026-07-17' } };

    expect(buildKey(noScope, context).identity).toBe('jobs:daily-settlement:v1::2026-07-17');
    expect(buildKey(noTarget, context).identity).toBe('jobs:daily-settlement:v1:2026-07-17:');
  });

  it('tags numbers, bigints and Dates in the scope, and renders them as text in the target', () => {
    const typed: KeySpec = {
      namespace: 'n',
      operation: 'o',
      scope: ['user.id', 'user.big', 'user.since'],
      target: ['params.id', 'params.big', 'params.admin', 'params.since'],
    };
    const values = { id: 1001, big: 2n ** 64n, since: new Date(0) };
    const params = { ...values, admin: false };

    expect(buildKey(typed, { user: values, params }).identity).toBe(
      'n:o:v1:%N1001,%I18446744073709551616,%T1970-01-01T00%3A00%3A00.000Z:' +
        '1001,18446744073709551616,false,1970-01-01T00%3A00%3A00.000Z',
    );
    expect(buildKey(typed, { user: values, params: { ...params, id: '1001' } }).identity).toBe(
      buildKey(typed, { user: values, params }).identity,
    );
  });

  it('rejects objects and arrays as scope or target values', () => {
    expect(() => keyOf(ctx({ params: { cartId: ['a', 'b'] } }))).toThrow(
      expect.objectContaining({ reason: 'invalid_segment_value', path: 'params.cartId' }),
    );
    expect(() => keyOf(ctx({ params: { cartId: { id: 1 } } }))).toThrow(KeyInputError);
  });

  it('reads function sources and names them when they return nothing', () => {
    const tenantOf = (context: KeyContext) =>
      (context.headers as Record<string, string>)['x-tenant'];
    const functional: KeySpec = { namespace: 'n', operation: 'o', scope: tenantOf };

    expect(buildKey(functional, { headers: { 'x-tenant': 'acme' } }).identity).toBe('n:o:v1:acme:');
    expect(() => buildKey(functional, { headers: {} })).toThrow(
      expect.objectContaining({ field: 'tenantOf()', segment: 'scope' }),
    );
  });

  it('hashes only the declared input paths, projected from the context', () => {
    const narrow: KeySpec = { ...spec, input: ['body.amount', 'query.range'] };
    const base = ctx({ query: { range: '2026-01' } });
    const noteChanged = ctx({
      query: { range: '2026-01' },
      body: { amount: '100.00', currency: 'EUR', note: 'other' },
    });

    expect(keyOf(noteChanged, narrow)).toBe(keyOf(base, narrow));
    expect(keyOf(ctx({ query: { range: '2026-02' } }), narrow)).not.toBe(keyOf(base, narrow));
  });

  it('applies per-field normalisation declared in the spec', () => {
    const exactNote: KeySpec = { ...spec, normalize: { 'body.note': 'exact' } };
    const caseless: KeySpec = {
      ...spec,
      normalize: { 'body.currency': (value) => value.trim().toUpperCase() },
    };

    expect(bodyKey({ note: ' x ' }, exactNote)).not.toBe(bodyKey({ note: 'x' }, exactNote));
    expect(bodyKey({ other: ' x ' }, exactNote)).toBe(bodyKey({ other: 'x' }, exactNote));
    expect(bodyKey({ currency: 'eur ' }, caseless)).toBe(bodyKey({ currency: 'EUR' }, caseless));
  });
});
