/**
 * Writes packages/core/test/vectors.json from the cases below and the current implementation.
 * Run `npx tsx packages/core/test/key/vectors.generate.ts` only to ADD cases: any change to an
 * existing case's expected output is a breaking change of the key format, and the vectors test
 * exists to catch exactly that.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildKey, canonicalKeyInput, OncelyError, type KeySpec } from '@oncely/core';
import { decodeVectorContext, VECTOR_INPUT_TAGS } from './vector-codec.js';

interface VectorCase {
  readonly name: string;
  readonly spec: Record<string, unknown>;
  readonly ctx: Record<string, unknown>;
}

const order = {
  namespace: 'shop',
  operation: 'order-create',
  scope: ['user.tenantId', 'user.id'],
  target: 'params.cartId',
};
const orderCtx = (body: unknown, extra: Record<string, unknown> = {}) => ({
  user: { tenantId: 'tenant-1', id: 'user-1001' },
  params: { cartId: 'cart-77' },
  body,
  ...extra,
});
const orderBody = { amount: '100.00', currency: 'EUR', note: 'leave at the door' };
const withBody = (name: string, body: unknown, spec: Record<string, unknown> = order) => ({
  name,
  spec,
  ctx: orderCtx(body),
});

const cases: VectorCase[] = [
  withBody('order: baseline', orderBody),
  withBody('order: outer whitespace in body values (same as baseline)', {
    amount: ' 100.00',
    currency: 'EUR\t',
    note: '\n leave at the door  ',
  }),
  withBody('order: property order reversed (same as baseline)', {
    note: 'leave at the door',
    currency: 'EUR',
    amount: '100.00',
  }),
  {
    name: 'order: transport headers differ (same as baseline)',
    spec: order,
    ctx: orderCtx(orderBody, { headers: { 'x-request-id': 'r-2', traceparent: '00-ff-01' } }),
  },
  withBody('order: version v2', orderBody, { ...order, version: 'v2' }),
  withBody('order: other operation', orderBody, { ...order, operation: 'order-quote' }),
  withBody('order: other amount', { ...orderBody, amount: '100.01' }),
  withBody('fingerprint: 64 bits', orderBody, { ...order, fingerprintBits: 64 }),
  withBody('fingerprint: 256 bits', orderBody, { ...order, fingerprintBits: 256 }),
  withBody('fingerprint: 100 bits', orderBody, { ...order, fingerprintBits: 100 }),
  withBody('amount: "100.00"', { amount: '100.00' }),
  withBody('amount: "10000"', { amount: '10000' }),
  withBody('amount: 100', { amount: 100 }),
  withBody('flag: 1', { flag: 1 }),
  withBody('flag: "1"', { flag: '1' }),
  withBody('flag: true', { flag: true }),
  withBody('flag: "true"', { flag: 'true' }),
  withBody('coupon: null', { coupon: null }),
  withBody('coupon: missing', {}),
  withBody('coupon: explicitly undefined (same as missing)', { coupon: { $undefined: true } }),
  withBody('coupon: "null"', { coupon: 'null' }),
  withBody('text: "Java 并发"', { topic: 'Java 并发' }),
  withBody('text: "Java并发"', { topic: 'Java并发' }),
  withBody('text: NFC', { dish: 'Crème brûlée' }),
  withBody('text: NFD (same as NFC)', { dish: 'Crème brûlée'.normalize('NFD') }),
  withBody('text: CRLF', { text: 'line one\r\nline two' }),
  withBody('text: LF (same as CRLF)', { text: 'line one\nline two' }),
  withBody('text: control characters, quotes, backslash, emoji', {
    text: 'tab\there "quoted" back\\slash \u0001 \u2028 😀',
  }),
  withBody('numbers: formatting', {
    numbers: [
      1e21,
      1e-7,
      0.1,
      333333333.3333333,
      4.5,
      { $number: '-0' },
      -1.5e-10,
      9007199254740991,
    ],
  }),
  withBody('nested objects', {
    order: { lines: [{ sku: 'A', qty: 2 }], address: { zip: '69001', city: 'Lyon' } },
  }),
  withBody('array: order kept', { tags: ['red', 'blue'] }),
  withBody('array: reversed (differs)', { tags: ['blue', 'red'] }),
  withBody(
    'array: declared unordered',
    { tags: ['red', 'blue'], items: [{ codes: ['y', 'x'] }] },
    { ...order, unordered: ['body.tags', 'body.items.*.codes'] },
  ),
  withBody(
    'array: declared unordered, reversed (same)',
    { tags: ['blue', 'red'], items: [{ codes: ['x', 'y'] }] },
    { ...order, unordered: ['body.tags', 'body.items.*.codes'] },
  ),
  withBody('types: Date', { at: { $date: '2026-07-17T10:00:00+08:00' } }),
  withBody('types: bigint', { id: { $bigint: '-12345678901234567890' } }),
  withBody('types: bytes', { file: { $bytes: 'AAH+/w==' } }),
  withBody('types: Map', {
    prices: {
      $map: [
        [2, 'two'],
        ['1', 'one'],
      ],
    },
  }),
  withBody('types: Set', { roles: { $set: ['b', 'a', 'b'] } }),
  withBody('keys: data keys starting with $', {
    data: { $literal: { $bigint: '1', $: 'dollar', plain: 'x' } },
  }),
  withBody('keys: array-index keys sort as text', { '10': 'ten', '2': 'two', a: 'a', '1': 'one' }),
  withBody('keys: __proto__ is data', { $literal: { ['__proto__']: { admin: true }, b: 1 } }),
  withBody('keys: NFD key (composed)', { ['clé'.normalize('NFD')]: 1 }),
  withBody('dto: @KeyIgnore properties left out', {
    $dto: {
      class: 'CreateOrderDto',
      ignore: ['clientSentAt'],
      fields: { amount: '10.00', clientSentAt: '10:00:01', lines: [{ sku: 'A' }] },
    },
  }),
  withBody(
    'normalize: exact note keeps whitespace',
    { note: '  keep me  ', other: '  trim me  ' },
    { ...order, normalize: { 'body.note': 'exact' } },
  ),
  {
    name: 'input: projection of two paths',
    spec: { ...order, input: ['body.amount', 'query.from'] },
    ctx: orderCtx(orderBody, { query: { from: '2026-01-01', page: '3' } }),
  },
  { name: 'input: empty list hashes {}', spec: { ...order, input: [] }, ctx: orderCtx(orderBody) },
  {
    name: 'segments: separator injection a:b + c',
    spec: order,
    ctx: orderCtx(orderBody, { user: { tenantId: 'a:b', id: 'c' } }),
  },
  {
    name: 'segments: separator injection a + b:c',
    spec: order,
    ctx: orderCtx(orderBody, { user: { tenantId: 'a', id: 'b:c' } }),
  },
  {
    name: 'segments: , { } % and spaces escaped',
    spec: order,
    ctx: orderCtx(orderBody, {
      user: { tenantId: 'a,b', id: '{x} 50%' },
      params: { cartId: 'a%2Cb' },
    }),
  },
  {
    name: 'segments: non-ASCII escaped as UTF-8, NFD scope kept as sent',
    spec: order,
    ctx: orderCtx(orderBody, {
      user: { tenantId: '租户-1', id: 'José'.normalize('NFD') },
    }),
  },
  {
    name: 'segments: non-ASCII NFC scope',
    spec: order,
    ctx: orderCtx(orderBody, { user: { tenantId: '租户-1', id: 'José' } }),
  },
  {
    name: 'scope: outer whitespace kept (differs from baseline)',
    spec: order,
    ctx: orderCtx(orderBody, { user: { tenantId: 'tenant-1 ', id: 'user-1001' } }),
  },
  {
    name: 'target: outer whitespace trimmed (same as baseline)',
    spec: order,
    ctx: orderCtx(orderBody, { params: { cartId: ' cart-77\t' } }),
  },
  {
    name: 'segments: 64 characters kept',
    spec: order,
    ctx: orderCtx(orderBody, { params: { cartId: 'x'.repeat(64) } }),
  },
  {
    name: 'segments: 65 characters hashed',
    spec: order,
    ctx: orderCtx(orderBody, { params: { cartId: 'x'.repeat(65) } }),
  },
  {
    name: 'segments: numbers, bigint and Date tagged in the scope',
    spec: { namespace: 'n', operation: 'o', scope: ['user.id', 'user.big', 'user.since'] },
    ctx: {
      user: {
        id: 1001,
        big: { $bigint: '18446744073709551616' },
        since: { $date: '1970-01-01T00:00:00Z' },
      },
    },
  },
  {
    name: 'segments: string scope "1001" (differs from the number)',
    spec: { namespace: 'n', operation: 'o', scope: 'user.id' },
    ctx: { user: { id: '1001' } },
  },
  {
    name: 'segments: numbers, bigint, boolean and Date as text in the target',
    spec: {
      namespace: 'n',
      operation: 'o',
      target: ['params.id', 'params.big', 'params.admin', 'params.since'],
    },
    ctx: {
      params: {
        id: 1001,
        big: { $bigint: '18446744073709551616' },
        admin: false,
        since: { $date: '1970-01-01T00:00:00Z' },
      },
    },
  },
  {
    name: 'segments: no scope',
    spec: { namespace: 'jobs', operation: 'daily-settlement', target: 'params.day' },
    ctx: { params: { day: '2026-07-17' } },
  },
  {
    name: 'segments: no target',
    spec: { namespace: 'jobs', operation: 'daily-settlement', scope: 'params.day' },
    ctx: { params: { day: '2026-07-17' } },
  },
  {
    name: 'segments: optional absent uses the default',
    spec: {
      ...order,
      target: ['params.cartId', { path: 'query.locale', optional: true, default: 'en' }],
    },
    ctx: orderCtx(orderBody),
  },
  {
    name: 'segments: optional present',
    spec: {
      ...order,
      target: ['params.cartId', { path: 'query.locale', optional: true, default: 'en' }],
    },
    ctx: orderCtx(orderBody, { query: { locale: 'fr' } }),
  },
  {
    name: 'segments: header and array element paths',
    spec: {
      namespace: 'inventory',
      operation: 'deduct',
      scope: 'headers.x-tenant-id',
      target: ['params.orderId', 'body.items.0.sku'],
    },
    ctx: {
      headers: { 'x-tenant-id': 'acme' },
      params: { orderId: 'o-1' },
      body: { items: [{ sku: 'sku-9' }] },
    },
  },
  {
    name: 'length: long segments hashed to stay within 512',
    spec: {
      namespace: 'n'.repeat(64),
      operation: 'o'.repeat(64),
      version: 'v'.repeat(64),
      scope: ['user.a', 'user.b', 'user.c', 'user.d', 'user.e'],
      target: ['params.a', 'params.b', 'params.c', 'params.d', 'params.e'],
      fingerprintBits: 256,
    },
    ctx: {
      user: { a: 'a'.repeat(64), b: 'b'.repeat(64), c: 'c'.repeat(64), d: 'd'.repeat(64), e: 'e' },
      params: {
        a: 'a'.repeat(64),
        b: 'b'.repeat(64),
        c: 'c'.repeat(64),
        d: 'd'.repeat(64),
        e: 'e',
      },
    },
  },
  {
    name: 'error: required scope missing',
    spec: order,
    ctx: orderCtx(orderBody, { user: { id: 'user-1001' } }),
  },
  {
    name: 'error: required target empty',
    spec: order,
    ctx: orderCtx(orderBody, { params: { cartId: '   ' } }),
  },
  {
    name: 'error: boolean scope refused',
    spec: { namespace: 'n', operation: 'o', scope: 'user.tenantId' },
    ctx: { user: { tenantId: false } },
  },
  withBody('error: NaN in input', { price: { $number: 'NaN' } }),
  withBody('error: fingerprintBits not a multiple of 4', orderBody, {
    ...order,
    fingerprintBits: 66,
  }),
];

function expected(vector: VectorCase): Record<string, unknown> {
  const spec = vector.spec as unknown as KeySpec;
  const ctx = decodeVectorContext(vector.ctx);
  try {
    const canonical = canonicalKeyInput(spec, ctx);
    return { ...buildKey(spec, ctx), canonical };
  } catch (error) {
    if (error instanceof OncelyError) {
      return { error: { name: error.name, code: error.code } };
    }
    throw error;
  }
}

const vectors = {
  description:
    'Golden vectors for @oncely/core business keys: spec + request context in, canonical input, key, identity, fingerprint and SHA-256 digest out. An implementation that reproduces them byte for byte builds the same keys.',
  inputTags: VECTOR_INPUT_TAGS,
  cases: cases.map((vector) => ({ ...vector, ...expected(vector) })),
};

const target = fileURLToPath(new URL('../vectors.json', import.meta.url));
writeFileSync(target, `${JSON.stringify(vectors, null, 2)}\n`);
console.log(`wrote ${vectors.cases.length} cases to ${target}`);
