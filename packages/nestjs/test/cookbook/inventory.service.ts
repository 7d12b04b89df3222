import { Injectable } from '@nestjs/common';
import { IdempotentKey } from '@oncely/nestjs';
import type { Gate } from './support/gate.js';

/** One order line to take from stock; the order workflow calls `deduct` for each. */
export interface StockDeduction {
  readonly tenantId: string;
  readonly orderId: string;
  readonly sku: string;
  readonly qty: number;
}

export interface Deducted {
  readonly sku: string;
  readonly remaining: number;
}

/** Thrown while stock is short: a restock may fix it, so nothing of it is kept. */
export class InsufficientStockError extends Error {
  constructor(
    readonly sku: string,
    readonly requested: number,
    readonly available: number,
  ) {
    super(`Only ${available} of ${sku} in stock, ${requested} requested: restock, then retry.`);
    this.name = 'InsufficientStockError';
  }
}

/**
 * Stands in for the stock table. In a database, its movements table is also unique on
 * `(order_id, sku)`; this one is not, so that the tests see what the key alone prevents.
 */
@Injectable()
export class StockLevels {
  readonly movements: StockDeduction[] = [];
  gate: Gate | undefined;
  readonly #levels = new Map<string, number>();

  restock(tenantId: string, sku: string, qty: number): void {
    const key = `${tenantId}/${sku}`;
    this.#levels.set(key, (this.#levels.get(key) ?? 0) + qty);
  }

  async take(line: StockDeduction): Promise<Deducted> {
    await this.gate?.pass();
    const key = `${line.tenantId}/${line.sku}`;
    const available = this.#levels.get(key) ?? 0;
    if (available < line.qty) throw new InsufficientStockError(line.sku, line.qty, available);
    this.#levels.set(key, available - line.qty);
    this.movements.push(line);
    return { sku: line.sku, remaining: available - line.qty };
  }
}

@Injectable()
export class InventoryService {
  constructor(private readonly stock: StockLevels) {}

  @IdempotentKey({
    operation: 'inventory-deduct',
    scope: 'args.0.tenantId',
    target: ['args.0.orderId', 'args.0.sku'],
    input: ['args.0.qty'],
    idempotencyKey: 'ignored',
    onBusy: 'wait',
    retention: 30 * 24 * 60 * 60 * 1000,
  })
  deduct(line: StockDeduction): Promise<Deducted> {
    return this.stock.take(line);
  }
}
