import { randomBytes } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';

/**
 * A demo business table with its own unique constraint (`order_ref`), named uniquely per run
 * and dropped afterwards.
 */
export class OrdersTable {
  readonly name = `oncely_test_orders_${randomBytes(5).toString('hex')}`;

  constructor(private readonly dataSource: DataSource) {}

  async create(): Promise<void> {
    await this.dataSource.query(
      `CREATE TABLE ${this.escaped} (${this.column('order_ref')} varchar(64) NOT NULL PRIMARY KEY, ${this.column('written_by')} varchar(64) NOT NULL)`,
    );
  }

  async drop(): Promise<void> {
    await this.dataSource.query(`DROP TABLE IF EXISTS ${this.escaped}`);
  }

  async insert(manager: EntityManager, orderRef: string, writtenBy: string): Promise<void> {
    const [first, second] = this.dataSource.options.type === 'postgres' ? ['$1', '$2'] : ['?', '?'];
    await manager.query(
      `INSERT INTO ${this.escaped} (${this.column('order_ref')}, ${this.column('written_by')}) VALUES (${first}, ${second})`,
      [orderRef, writtenBy],
    );
  }

  /** Every row, as `order_ref:written_by`, sorted. */
  async rows(): Promise<string[]> {
    const rows: { order_ref: string; written_by: string }[] = await this.dataSource.query(
      `SELECT ${this.column('order_ref')} AS order_ref, ${this.column('written_by')} AS written_by FROM ${this.escaped}`,
    );
    return rows.map((row) => `${row.order_ref}:${row.written_by}`).sort();
  }

  /** Qualified like the records table, so on PostgreSQL it lands in the run's own schema. */
  private get escaped(): string {
    const { driver, options } = this.dataSource;
    const { schema } = driver.parseTableName(this.name);
    const parts = options.type === 'postgres' && schema ? [schema, this.name] : [this.name];
    return parts.map((part) => driver.escape(part)).join('.');
  }

  private column(name: string): string {
    return this.dataSource.driver.escape(name);
  }
}
