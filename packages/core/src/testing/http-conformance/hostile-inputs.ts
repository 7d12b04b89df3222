import { parseIdempotencyKeyHeader } from '../../http/idempotency-key-header.js';

/**
 * Hostile inputs every integration faces, drawn from a seeded generator so a failure names the
 * seed and replays exactly. Header values are latin1 strings (what Node puts on the wire byte for
 * byte): UTF-8 text is sent as its bytes, as a client that does not care about RFC 9110 would.
 */
export class HostileRandom {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** mulberry32: small, fast and good enough to spread test inputs. */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(values: readonly T[]): T {
    return values[this.int(0, values.length - 1)] as T;
  }

  chars(min: number, max: number, code: () => number): string {
    return Array.from({ length: this.int(min, max) }, () => String.fromCodePoint(code())).join('');
  }
}

const asWireBytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
// fetch refuses control characters (and so would any proxy); everything else goes out.
const sendable = (value: string) => /^[\t\x20-\x7e\x80-\xff]*$/.test(value);
const INJECTION = [':', ',', '%', '{', '}', '%3A', '%25', '"', '\\', ';', '=', ' '];
const KEY_CONSTANTS = [
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
];
const TOKEN = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-';

function keyCandidate(random: HostileRandom): string {
  switch (random.int(0, 8)) {
    case 0:
      return random.chars(0, 40, () => random.int(0x20, 0x7e));
    case 1:
      return asWireBytes(
        random.chars(1, 20, () => random.pick([0xe9, 0x1f600, 0x4e2d, 0x301, 0x41])),
      );
    case 2:
      return asWireBytes(random.chars(1, 20, () => random.int(0x80, 0x7ff)));
    case 3:
      return 'k'.repeat(random.int(250, 300));
    case 4:
      return `"${'q'.repeat(random.int(250, 300))}"`;
    case 5:
      return 'x'.repeat(random.int(1, 20_000));
    case 6:
      return Array.from({ length: random.int(1, 8) }, () =>
        random.next() < 0.5
          ? random.pick(INJECTION)
          : random.chars(1, 6, () => TOKEN.charCodeAt(random.int(0, TOKEN.length - 1))),
      ).join('');
    case 7:
      return `"${random.chars(0, 20, () => random.pick([0x20, 0x21, ...Array.from({ length: 0x7e - 0x23 + 1 }, (_, i) => 0x23 + i)]))}"`;
    default:
      return random.pick(KEY_CONSTANTS);
  }
}

/** `count` sendable `Idempotency-Key` values, valid and hostile mixed. */
export function hostileKeyHeaders(random: HostileRandom, count: number): string[] {
  const values: string[] = [];
  while (values.length < count) {
    const candidate = keyCandidate(random);
    if (sendable(candidate)) values.push(candidate);
  }
  return values;
}

/** What oncely must answer to a key header value, independent of the rest of the request. */
export function keyHeaderVerdict(value: string): { valid: true; key: string } | { valid: false } {
  // Node trims optional whitespace around a header value before anyone sees it.
  const parsed = parseIdempotencyKeyHeader(value.replace(/^[\t ]+|[\t ]+$/g, ''));
  return parsed.kind === 'valid' ? { valid: true, key: parsed.value } : { valid: false };
}

const POLLUTION = [
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"prototype":{"polluted":"yes"}}',
  '{"__proto__":{"toString":"x","valueOf":1}}',
  '{"__proto__":null}',
  '{"$t":"object","v":{"__proto__":{"polluted":"yes"}}}',
];

/** Raw JSON texts meant to pollute prototypes, if anything merged them carelessly. */
export function pollutionBodies(): string[] {
  return POLLUTION.flatMap((payload) => [
    payload,
    `${payload.slice(0, -1)},"orderId":"o-1","amount":"10.00"}`,
  ]);
}

function jsonValue(random: HostileRandom, depth: number): unknown {
  const kind = random.int(0, depth > 0 ? 7 : 5);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return random.next() < 0.5;
    case 2:
      return random.int(-1e9, 1e9);
    case 3:
      return random.next() * 1e6 - 5e5;
    case 4:
      return random.chars(0, 12, () =>
        random.pick([0x61, 0x3a, 0x25, 0x7b, 0xe9, 0x301, 0x1f600, 0x20]),
      );
    case 5:
      return random.pick(['', ' ', 'o-1', '10.00', '__proto__', 'constructor']);
    case 6:
      return Array.from({ length: random.int(0, 4) }, () => jsonValue(random, depth - 1));
    default:
      return Object.fromEntries(
        Array.from({ length: random.int(0, 4) }, () => [
          random.pick(['orderId', 'amount', 'a', '__proto__', 'constructor', 'pad', 'é']),
          jsonValue(random, depth - 1),
        ]),
      );
  }
}

function wrongTypes(random: HostileRandom): string {
  const body: Record<string, unknown> = {};
  if (random.next() < 0.8) {
    body.orderId =
      random.next() < 0.5
        ? jsonValue(random, 2)
        : random.pick(['', ' ', 'a'.repeat(65), 'o:1,2{3}%', 'o-1']);
  }
  if (random.next() < 0.8) {
    body.amount =
      random.next() < 0.5 ? jsonValue(random, 2) : random.pick(['10.00', '1e999', '-0', 'NaN', '']);
  }
  return JSON.stringify(body);
}

/** `count` raw request bodies: JSON of every shape, wrong types, pollution, deep, big, broken. */
export function hostileBodies(random: HostileRandom, count: number): string[] {
  return Array.from({ length: count }, () => {
    switch (random.int(0, 5)) {
      case 0:
        return JSON.stringify(jsonValue(random, 6)) ?? 'null';
      case 1:
        return wrongTypes(random);
      case 2:
        return random.pick(pollutionBodies());
      case 3: {
        const depth = random.int(50, 20_000);
        return random.next() < 0.5
          ? '['.repeat(depth) + ']'.repeat(depth)
          : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
      }
      case 4:
        return JSON.stringify({
          orderId: 'o-1',
          amount: '1.00',
          pad: 'p'.repeat(random.int(90_000, 400_000)),
        });
      default:
        return random.pick([
          '{',
          '{"a":1,}',
          'nul',
          '"\\ud800"',
          '[1,2',
          '{"orderId":"o-1","amount":"1.00"',
          '',
        ]);
    }
  });
}

/** Tenants and keys made of the characters that separate key segments, to forge another key. */
export function injectionPiece(random: HostileRandom): string {
  return Array.from({ length: random.int(1, 5) }, () =>
    random.next() < 0.5
      ? random.pick([':', ',', '%', '{', '}', '%3A', '~', '.', '-'])
      : random.chars(1, 3, () =>
          random.pick([...'abcdefghijklmnopqrstuvwxyz0123456789'].map((c) => c.charCodeAt(0))),
        ),
  ).join('');
}

/** Every own property of Object.prototype, to prove nothing was added or replaced. */
export function prototypeSnapshot(): string {
  return Object.getOwnPropertyNames(Object.prototype)
    .map((name) => `${name}:${typeof (Object.prototype as Record<string, unknown>)[name]}`)
    .join('|');
}

/** The business validation of a pay body: orderId and amount, nothing else kept. */
export function isValidPayBody(value: unknown): value is {
  /** 1 to 64 letters, digits and dashes. */
  orderId: string;
  /** Decimal text with two places, e.g. `12.50`. */
  amount: string;
} {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { orderId, amount } = value as Record<string, unknown>;
  return (
    typeof orderId === 'string' &&
    /^[A-Za-z0-9-]{1,64}$/.test(orderId) &&
    typeof amount === 'string' &&
    /^\d{1,9}\.\d{2}$/.test(amount)
  );
}

/** Whether parsed JSON holds a `__proto__` key or a `constructor` with a `prototype` key. */
export function isPrototypePoisoned(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next !== 'object' || next === null) continue;
    if (Object.hasOwn(next, '__proto__')) return true;
    const { constructor } = next as { constructor?: unknown };
    if (
      Object.hasOwn(next, 'constructor') &&
      typeof constructor === 'object' &&
      constructor !== null &&
      Object.hasOwn(constructor, 'prototype')
    ) {
      return true;
    }
    pending.push(...Object.values(next));
  }
  return false;
}
