import type { DataSource } from 'typeorm';
import type { SettlementLedger, SettlementRun } from './settlement-ledger.js';

/**
 * Settlement runs in a SQL table (SQLite, PostgreSQL or MySQL). Deliberately without a unique
 * index on the period: that the job runs once per period is oncely's doing, and visible here.
 */
export class SqlSettlementLedger implements SettlementLedger {
  constructor(
    private readonly dataSource: DataSource,
    private readonly table: string,
    private readonly node: string,
  ) {}

  async createTable(): Promise<void> {
    await this.dataSource.query(
      `CREATE TABLE IF NOT EXISTS ${this.table} (business_period varchar(32) NOT NULL, node varchar(64) NOT NULL, settled_at varchar(40) NOT NULL)`,
    );
  }

  async record(businessPeriod: string): Promise<SettlementRun> {
    const run = { businessPeriod, node: this.node, settledAt: new Date().toISOString() };
    const [sql, parameters] = this.dataSource.driver.escapeQueryWithParameters(
      `INSERT INTO ${this.table} (business_period, node, settled_at) VALUES (:period, :node, :at)`,
      { period: run.businessPeriod, node: run.node, at: run.settledAt },
    );
    await this.dataSource.query(sql, parameters);
    return run;
  }
}
