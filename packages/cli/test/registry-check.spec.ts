import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { oncely } from './fixtures/cli-session.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const SHOP = fixture('shop.module.ts');
const SHOP_WITH_REFUNDS = fixture('shop-with-refunds.module.ts');

/** `oncely registry export` and `check`: the claims of an app as a file reviewed like code. */
describe('oncely registry', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'oncely-registry-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('check fails on an added route, and passes once export has updated the file', async () => {
    expect(await oncely(dir, 'registry', 'export', SHOP)).toEqual({
      code: 0,
      out: 'Wrote the 2 claims of shop-api to oncely.registry.yaml.\n',
      err: '',
    });
    expect((await oncely(dir, 'registry', 'check', SHOP)).code).toBe(0);

    const added = await oncely(dir, 'registry', 'check', SHOP_WITH_REFUNDS);
    expect(added.code).toBe(1);
    expect(added.out).toBe(
      [
        'The claims of shop-api differ from oncely.registry.yaml:',
        '  added     idempotency shop:refund-create:v1 at RefundsController.create (POST /refunds)',
        'Review the change, then update the file with',
        `  oncely registry export ${SHOP_WITH_REFUNDS}`,
        'and commit it.',
        '',
      ].join('\n'),
    );

    expect((await oncely(dir, 'registry', 'export', SHOP_WITH_REFUNDS)).code).toBe(0);
    expect(await oncely(dir, 'registry', 'check', SHOP_WITH_REFUNDS)).toEqual({
      code: 0,
      out: 'oncely.registry.yaml lists the 3 claims of shop-api.\n',
      err: '',
    });
    expect((await oncely(dir, 'registry', 'check', SHOP)).out).toContain(
      '  removed   idempotency shop:refund-create:v1 at RefundsController.create (POST /refunds)',
    );
  });

  it('writes a deterministic file, with a header, sorted claims and every field', async () => {
    await oncely(dir, 'registry', 'export', SHOP_WITH_REFUNDS, '--file', 'claims.yaml');
    const first = await readFile(join(dir, 'claims.yaml'), 'utf8');
    await oncely(dir, 'registry', 'export', SHOP_WITH_REFUNDS, '-f', 'claims.yaml');

    expect(await readFile(join(dir, 'claims.yaml'), 'utf8')).toBe(first);
    expect(first)
      .toBe(`# oncely registry: every operation this service claims, and how its keys are built.
# Written by \`oncely registry export\`; \`oncely registry check\` fails while the app claims
# anything else, so a new or changed claim is reviewed with the change that makes it.
# Durations (ttl, maxDuration) are milliseconds.

format: oncely-registry/v1
service: shop-api
claims:
  - operation: order-create
    version: v1
    namespace: shop
    mechanism: idempotency
    owner: shop-api
    route: OrdersController.create (POST /orders)
    description: Creates an order from a cart
    scope:
      - user.tenantId
    target: []
    input:
      - body
    clientKey: required
    shared: false
    fingerprintBits: 128
    ttl:
      lease: 30000
      retention: 86400000
      replayCache: 60000
    maxDuration: 300000
  - operation: order-quote
    version: v1
    namespace: shop
    mechanism: single-flight
    owner: shop-api
    route: OrdersController.quote (POST /orders/quote)
    scope: []
    target: []
    input:
      - body.cartId
    shared: false
    fingerprintBits: 128
    ttl:
      lease: 30000
      result: 5000
      error: 3000
    maxDuration: 300000
  - operation: refund-create
    version: v1
    namespace: shop
    mechanism: idempotency
    owner: shop-api
    route: RefundsController.create (POST /refunds)
    scope:
      - user.tenantId
    target:
      - body.orderId
    input:
      - body
    clientKey: required
    shared: false
    fingerprintBits: 128
    ttl:
      lease: 30000
      retention: 86400000
      replayCache: 60000
    maxDuration: 300000
`);
  });

  it('check names each changed field of a claim, and a changed service', async () => {
    await oncely(dir, 'registry', 'export', SHOP);
    const file = join(dir, 'oncely.registry.yaml');
    const text = await readFile(file, 'utf8');
    await writeFile(
      file,
      text
        .replace('service: shop-api', 'service: shop')
        .replace('retention: 86400000', 'retention: 3600000')
        .replace('    description: Creates an order from a cart\n', ''),
    );

    const changed = await oncely(dir, 'registry', 'check', SHOP);
    expect(changed.code).toBe(1);
    expect(changed.out).toContain(
      [
        '  service   "shop" -> "shop-api"',
        '  changed   idempotency shop:order-create:v1 at OrdersController.create (POST /orders)',
        '              description: (none) -> "Creates an order from a cart"',
        '              ttl.retention: 3600000 -> 86400000',
      ].join('\n'),
    );
  });

  it('check refuses a missing or malformed file, saying how to write it (exit 2)', async () => {
    const missing = await oncely(dir, 'registry', 'check', SHOP, '--file', 'absent.yaml');
    expect(missing).toEqual({
      code: 2,
      out: '',
      err: `absent.yaml does not exist. Write it with\n  oncely registry export ${SHOP} --file absent.yaml\nand commit it.\n`,
    });

    await writeFile(join(dir, 'oncely.registry.yaml'), 'claims: [');
    expect((await oncely(dir, 'registry', 'check', SHOP)).err).toMatch(
      /^oncely\.registry\.yaml is not valid YAML: /,
    );
    await writeFile(join(dir, 'oncely.registry.yaml'), 'service: shop\nclaims: []\n');
    expect((await oncely(dir, 'registry', 'check', SHOP)).err).toMatch(
      /^oncely\.registry\.yaml is not an oncely registry: it must start with "format: oncely-registry\/v1"/,
    );
    await writeFile(
      join(dir, 'oncely.registry.yaml'),
      'format: oncely-registry/v1\nservice: shop\nclaims:\n  - operation: a\n',
    );
    expect((await oncely(dir, 'registry', 'check', SHOP)).err).toBe(
      'oncely.registry.yaml claim #1 has no "mechanism".\n',
    );
  });

  it('reads the oncely instance an Express app module exports', async () => {
    const run = await oncely(dir, 'registry', 'export', fixture('express-shop.app.ts'));
    expect(run).toMatchObject({ code: 0, err: '' });
    const text = await readFile(join(dir, 'oncely.registry.yaml'), 'utf8');

    expect(text).toContain('service: shop-express\n');
    expect(text).toContain('    route: POST /orders\n');
    expect(text).toContain('    owner: shop-express\n');
  });

  it('refuses a module that is missing or exports no app, and names a wanted export', async () => {
    expect((await oncely(dir, 'registry', 'export', 'nowhere.js')).err).toBe(
      'nowhere.js does not exist. Give the compiled JavaScript module that exports the app (for example dist/app.module.js), after building it.\n',
    );
    const plain = fixture('cli-session.ts');
    expect((await oncely(dir, 'registry', 'export', plain)).err).toMatch(/exports no app: /);
    expect(await oncely(dir, 'registry', 'export', SHOP, '--export', 'AppModule')).toEqual({
      code: 2,
      out: '',
      err: `${SHOP} has no export named "AppModule".\n`,
    });
    expect((await oncely(dir, 'registry', 'export', SHOP, '--export', 'ShopModule')).code).toBe(0);
  });
});
