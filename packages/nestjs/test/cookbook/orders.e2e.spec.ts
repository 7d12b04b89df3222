import { ACME, startCookbookApp, type Caller, type CookbookApp } from './support/cookbook-app.js';
import { Gate } from './support/gate.js';
import { OrderBook, OrdersController } from './orders.controller.js';

const OPERATION = 'shop:order-create:v1';

describe('cookbook: order creation (client key, scoped by tenant and user)', () => {
  let shop: CookbookApp;
  let book: OrderBook;

  beforeAll(async () => {
    shop = await startCookbookApp({ controllers: [OrdersController], providers: [OrderBook] });
    book = shop.get(OrderBook);
  });

  afterAll(() => shop.close());

  const cart = (cartId: string, qty = 2) => ({ cartId, lines: [{ sku: 'sku-1', qty }] });
  const create = (key: string, body: object, caller: Caller = ACME) =>
    shop.post('/orders', body, caller).set('idempotency-key', key);
  const placed = (cartId: string) => book.placed.filter((order) => order.cartId === cartId).length;

  it('replays a retry with the same key: one order, the same response', async () => {
    const first = await create('k-replay', cart('cart-replay'));
    const retry = await create('k-replay', cart('cart-replay'));
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(placed('cart-replay')).toBe(1);
    // The record's identity: namespace:operation:version:scope:target, the client key as target.
    expect(shop.keys(OPERATION, 'executed')).toContain('shop:order-create:v1:acme,u-1:k-replay');
  });

  it('answers duplicates sent while the first runs 409 with Retry-After, then replays it', async () => {
    book.gate = new Gate();
    const first = create('k-busy', cart('cart-busy'));
    const firstDone = first.then((response) => response);
    await book.gate.entered;
    const duplicates = await Promise.all([1, 2, 3].map(() => create('k-busy', cart('cart-busy'))));
    book.gate.open();
    book.gate = undefined;
    expect((await firstDone).status).toBe(201);
    for (const duplicate of duplicates) {
      expect(duplicate.status).toBe(409);
      expect(duplicate.body.type).toBe('urn:oncely:problem:request-in-flight');
      expect(Number(duplicate.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    const retry = await create('k-busy', cart('cart-busy'));
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual((await firstDone).body);
    expect(placed('cart-busy')).toBe(1);
  });

  it('refuses the same key with other lines (422) and keeps the first order', async () => {
    const first = await create('k-mismatch', cart('cart-mismatch', 2));
    const changed = await create('k-mismatch', cart('cart-mismatch', 3));
    expect(changed.status).toBe(422);
    expect(changed.body.type).toBe('urn:oncely:problem:payload-mismatch');
    const retry = await create('k-mismatch', cart('cart-mismatch', 2));
    expect(retry.body).toEqual(first.body);
    expect(placed('cart-mismatch')).toBe(1);
  });

  it('ignores what changes between sends: the client send time, trace headers', async () => {
    const first = await create('k-noise', {
      ...cart('cart-noise'),
      clientSentAt: '2026-07-17T10:00:01Z',
    }).set('x-request-id', 'trace-a');
    const retry = await create('k-noise', {
      ...cart('cart-noise'),
      clientSentAt: '2026-07-17T10:00:03Z',
    }).set('x-request-id', 'trace-b');
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(placed('cart-noise')).toBe(1);
  });

  it('refuses a request without its key (400) or without its tenant (400)', async () => {
    const keyless = await shop.post('/orders', cart('cart-keyless'));
    expect(keyless.status).toBe(400);
    expect(keyless.body.type).toBe('urn:oncely:problem:idempotency-key-missing');
    const anonymous = await create('k-anonymous', cart('cart-anonymous'), {});
    expect(anonymous.status).toBe(400);
    expect(anonymous.body).toMatchObject({
      type: 'urn:oncely:problem:missing-key-field',
      field: 'user.tenantId',
    });
    expect(placed('cart-keyless') + placed('cart-anonymous')).toBe(0);
  });

  it('keeps nothing of a failure: the retry with the same key places the order', async () => {
    book.down = true;
    const failed = await create('k-down', cart('cart-down'));
    book.down = false;
    const retry = await create('k-down', cart('cart-down'));
    expect(failed.status).toBe(503);
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(placed('cart-down')).toBe(1);
  });

  describe('reverse tests: alike, yet different orders', () => {
    it('creates two orders for two carts of the same user', async () => {
      const first = await create('k-cart-a', cart('cart-a'));
      const second = await create('k-cart-b', cart('cart-b'));
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(second.body.orderId).not.toBe(first.body.orderId);
    });

    it("creates another user's order under the same client key", async () => {
      const mine = await create('k-shared', cart('cart-u1'), { tenant: 'acme', user: 'u-1' });
      const theirs = await create('k-shared', cart('cart-u2'), { tenant: 'acme', user: 'u-2' });
      expect([mine.status, theirs.status]).toEqual([201, 201]);
      expect(theirs.headers['idempotent-replayed']).toBeUndefined();
      expect(placed('cart-u1') + placed('cart-u2')).toBe(2);
    });

    it('creates the same cart in another tenant under the same key', async () => {
      const acme = await create('k-tenant', cart('cart-t'), { tenant: 'acme', user: 'u-1' });
      const globex = await create('k-tenant', cart('cart-t'), { tenant: 'globex', user: 'u-1' });
      expect([acme.status, globex.status]).toEqual([201, 201]);
      expect(globex.body.orderId).not.toBe(acme.body.orderId);
      expect(placed('cart-t')).toBe(2);
    });

    it("lets the cart's unique constraint refuse a double click that made two keys (409)", async () => {
      const first = await create('k-click-1', cart('cart-click'));
      const second = await create('k-click-2', cart('cart-click'));
      expect(first.status).toBe(201);
      expect(second.status).toBe(409);
      expect(placed('cart-click')).toBe(1);
    });
  });
});
