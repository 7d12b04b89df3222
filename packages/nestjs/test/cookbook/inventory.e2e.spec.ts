import { IdempotencyMismatchError, MissingKeyFieldError } from '@oncely/core';
import { startCookbookApp, type CookbookApp } from './support/cookbook-app.js';
import { Gate } from './support/gate.js';
import {
  InsufficientStockError,
  InventoryService,
  StockLevels,
  type StockDeduction,
} from './inventory.service.js';

describe('cookbook: inventory deduction (a provider method, one per order line)', () => {
  let shop: CookbookApp;
  let inventory: InventoryService;
  let stock: StockLevels;

  beforeAll(async () => {
    shop = await startCookbookApp({ providers: [InventoryService, StockLevels] });
    inventory = shop.get(InventoryService);
    stock = shop.get(StockLevels);
    for (const tenant of ['acme', 'globex']) {
      for (const sku of ['sku-1', 'sku-2']) stock.restock(tenant, sku, 1_000);
    }
  });

  afterAll(() => shop.close());

  const line = (orderId: string, changes: Partial<StockDeduction> = {}): StockDeduction => ({
    tenantId: 'acme',
    orderId,
    sku: 'sku-1',
    qty: 2,
    ...changes,
  });
  const movements = (orderId: string) =>
    stock.movements.filter((movement) => movement.orderId === orderId).length;

  it('deducts a line called twice once, and hands the second call the first result', async () => {
    const first = await inventory.deduct(line('order-twice'));
    const again = await inventory.deduct(line('order-twice'));
    expect(again).toEqual(first);
    expect(movements('order-twice')).toBe(1);
    expect(shop.keys('shop:inventory-deduct:v1', 'replayed')).toContain(
      'shop:inventory-deduct:v1:acme:order-twice,sku-1',
    );
  });

  it('deducts concurrent calls for one line once; every caller gets the result', async () => {
    stock.gate = new Gate();
    const first = inventory.deduct(line('order-busy'));
    await stock.gate.entered;
    const duplicates = [1, 2, 3, 4].map(() => inventory.deduct(line('order-busy')));
    stock.gate.open();
    stock.gate = undefined;
    const results = await Promise.all([first, ...duplicates]);
    for (const result of results) expect(result).toEqual(results[0]);
    expect(movements('order-busy')).toBe(1);
  });

  it('refuses the same line with another quantity (IdempotencyMismatchError)', async () => {
    await inventory.deduct(line('order-qty', { qty: 2 }));
    await expect(inventory.deduct(line('order-qty', { qty: 5 }))).rejects.toBeInstanceOf(
      IdempotencyMismatchError,
    );
    expect(movements('order-qty')).toBe(1);
  });

  it('keeps nothing while stock is short: after a restock the same line is deducted', async () => {
    stock.restock('acme', 'sku-rare', 1);
    const short = line('order-short', { sku: 'sku-rare', qty: 3 });
    await expect(inventory.deduct(short)).rejects.toBeInstanceOf(InsufficientStockError);
    stock.restock('acme', 'sku-rare', 5);
    await expect(inventory.deduct(short)).resolves.toEqual({ sku: 'sku-rare', remaining: 3 });
    expect(movements('order-short')).toBe(1);
  });

  it('refuses a line without its order id, deducting nothing', async () => {
    const before = stock.movements.length;
    const orphan = { tenantId: 'acme', sku: 'sku-1', qty: 1 } as StockDeduction;
    await expect(inventory.deduct(orphan)).rejects.toBeInstanceOf(MissingKeyFieldError);
    expect(stock.movements).toHaveLength(before);
  });

  describe('reverse tests: alike, yet different deductions', () => {
    it('deducts another SKU of the same order', async () => {
      await inventory.deduct(line('order-skus', { sku: 'sku-1' }));
      await inventory.deduct(line('order-skus', { sku: 'sku-2' }));
      expect(movements('order-skus')).toBe(2);
    });

    it('deducts the same SKU and quantity for another order', async () => {
      await inventory.deduct(line('order-a'));
      await inventory.deduct(line('order-b'));
      expect(movements('order-a') + movements('order-b')).toBe(2);
    });

    it('deducts the same order id in another tenant', async () => {
      await inventory.deduct(line('order-tenants', { tenantId: 'acme' }));
      await inventory.deduct(line('order-tenants', { tenantId: 'globex' }));
      expect(movements('order-tenants')).toBe(2);
    });
  });
});
