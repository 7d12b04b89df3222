/**
 * Business-key throughput: `buildKey` on a typical 10-field, ~1 KB DTO against a naive
 * `JSON.stringify` + SHA-256 of the same DTO, measured in the same run with alternating rounds.
 * Run: `npm run bench:keys` (not a test: it prints figures, it asserts nothing). Profile with
 * `node --cpu-prof --import tsx packages/core/bench/keys.bench.ts`.
 */
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import canonicalizeModule from 'canonicalize';
import { buildKey, canonicalize, KeyIgnore, type KeyContext, type KeySpec } from '@oncely/core';

/**
 * Many short rounds: on a shared machine the load changes from one second to the next, so each
 * candidate is compared with the baseline measured right beside it, round by round.
 */
const ROUNDS = 25;
const ITERATIONS = 5_000;
/** The aim: a key costs at most this many times the naive stringify-and-hash. */
const AIM_RATIO = 1.25;
const POOL_SIZE = 256;

class AddressDto {
  line1!: string;
  line2!: string;
  city!: string;
  postalCode!: string;
  country!: string;
}

class OrderItemDto {
  sku!: string;
  name!: string;
  quantity!: number;
  unitPrice!: string;
}

/** Ten top-level fields, about 1 KB as JSON: what a validated `POST /orders` body looks like. */
class CreateOrderDto {
  customerId!: string;
  currency!: string;
  amount!: string;
  paymentMethod!: string;
  note!: string;
  couponCodes!: string[];
  shippingAddress!: AddressDto;
  items!: OrderItemDto[];
  deliveryDate!: Date;
  @KeyIgnore() clientSentAt!: string;
}

function order(seed: number): CreateOrderDto {
  const dto = new CreateOrderDto();
  dto.customerId = `cust-${100_000 + seed}`;
  dto.currency = 'EUR';
  dto.amount = `${(seed % 900) + 100}.${String(seed % 100).padStart(2, '0')}`;
  dto.paymentMethod = seed % 2 ? 'card' : 'sepa-debit';
  dto.note = `  Please leave the parcel with the neighbour at number ${seed % 40} if nobody answers; ring twice and wait a minute.\r\nFragile glassware inside: keep it upright, do not stack other parcels on top, and call before delivery.  `;
  dto.couponCodes = ['SPRING-10', `LOYAL-${seed % 7}`, 'FREE-SHIPPING-EU'];
  dto.shippingAddress = Object.assign(new AddressDto(), {
    line1: `${seed % 200} Rue de la République`,
    line2: 'Bâtiment B, 3e étage',
    city: 'Lyon',
    postalCode: `690${String(seed % 10).padStart(2, '0')}`,
    country: 'FR',
  });
  dto.items = [0, 1, 2, 3].map((index) =>
    Object.assign(new OrderItemDto(), {
      sku: `SKU-${seed}-${index}`,
      name: [
        'Espresso cups, porcelain, set of 6',
        'Stoneware teapot 1.2 l, matte grey',
        'Linen napkins, natural, set of 4',
        'Olive wood serving board',
      ][index],
      quantity: ((seed + index) % 5) + 1,
      unitPrice: `${(index + 1) * 12}.90`,
    }),
  );
  dto.deliveryDate = new Date(Date.UTC(2026, seed % 12, (seed % 28) + 1));
  dto.clientSentAt = new Date(1_700_000_000_000 + seed).toISOString();
  return dto;
}

const spec: KeySpec = {
  namespace: 'shop',
  operation: 'order-create',
  scope: ['user.tenantId', 'user.id'],
  target: 'params.cartId',
};
const contexts: KeyContext[] = Array.from({ length: POOL_SIZE }, (_, seed) => ({
  body: order(seed),
  user: { tenantId: `tenant-${seed % 13}`, id: 5000 + seed },
  params: { cartId: `cart-${seed}` },
  headers: { 'x-request-id': `req-${seed}`, traceparent: `00-${seed}-01` },
}));
const bodies = contexts.map((ctx) => ctx.body);
const jsonBodies = bodies.map((body) => JSON.parse(JSON.stringify(body)) as unknown);
const jcs = canonicalizeModule as unknown as (value: unknown) => string;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
let sink = 0;

const candidates: Record<string, (index: number) => string> = {
  'naive JSON.stringify + sha256': (i) => sha256(JSON.stringify(bodies[i])),
  'buildKey (full key)': (i) => buildKey(spec, contexts[i] as KeyContext).key,
  'canonicalize(body) + sha256': (i) => sha256(canonicalize(bodies[i])),
  'canonicalize lib alone + sha256 (plain JSON copy, no normalisation)': (i) =>
    sha256(jcs(jsonBodies[i])),
};

/**
 * Keys per second of CPU time (user + system) spent by this process: on a shared machine the
 * wall clock also counts time spent waiting for a core, CPU time does not.
 */
function round(run: (index: number) => string, iterations: number): number {
  const started = process.cpuUsage();
  for (let n = 0; n < iterations; n++) {
    sink += run(n % POOL_SIZE).length;
  }
  const used = process.cpuUsage(started);
  return iterations / ((used.user + used.system) / 1e6);
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

const bodyBytes = Buffer.byteLength(JSON.stringify(bodies[0]));
console.log(
  `DTO: ${Object.keys(bodies[0] as object).length} top-level fields, ${bodyBytes} bytes as JSON; ` +
    `node ${process.version}; load ${loadavg()[0]?.toFixed(1)}; ${ROUNDS} alternating rounds of ${ITERATIONS} after warm-up`,
);

for (const run of Object.values(candidates)) {
  round(run, ITERATIONS * 4);
}
const rates = new Map<string, number[]>(Object.keys(candidates).map((name) => [name, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, run] of Object.entries(candidates)) {
    rates.get(name)?.push(round(run, ITERATIONS));
  }
}

const BASELINE = 'naive JSON.stringify + sha256';
const baselineRates = rates.get(BASELINE) ?? [];
/** Median over rounds of the candidate's time against the baseline's in the same round. */
const ratioTo = (values: number[]) =>
  median(values.map((rate, index) => (baselineRates[index] as number) / rate));
for (const [name, values] of rates) {
  console.log(
    `${name.padEnd(70)} ${Math.round(median(values)).toLocaleString('en-US').padStart(10)} keys/s of CPU  ` +
      `(${ratioTo(values).toFixed(2)}x the naive baseline's time)`,
  );
}
const keyRates = rates.get('buildKey (full key)') ?? [];
const ratio = ratioTo(keyRates);
console.log(
  `\nbuildKey: ${Math.round(median(keyRates)).toLocaleString('en-US')} keys/s; ` +
    `${ratio.toFixed(2)}x the naive baseline's time (aim <= ${AIM_RATIO}x: ${ratio <= AIM_RATIO ? 'met' : 'NOT met'})`,
);
if (sink === 0) {
  console.log('unreachable');
}
