import type { OncelyEvent } from '@oncely/core';
import type { OncelyModuleOptions } from '@oncely/nestjs';
import { RedisFlightCoordinator } from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { PostgresSchema } from '../fixtures/postgres-schema.js';
import { uniqueNamespace } from '../fixtures/test-app.js';

/**
 * The real Redis and a PostgreSQL schema of this run, shared by the "nodes" of one suite, with
 * an `effects` table the handlers write to: the ground truth of "one effect".
 */
export class SharedBackends {
  readonly namespace = uniqueNamespace('bh');
  readonly keyPrefix = `oncely-bh-${randomUUID().slice(0, 8)}:`;
  readonly schema = new PostgresSchema();
  readonly events: OncelyEvent[] = [];
  admin!: DataSource;

  get effects(): string {
    return `"${this.schema.name}"."effects"`;
  }

  async start(): Promise<void> {
    await requireService('redis');
    await requireService('postgres');
    this.admin = await this.schema.create();
    await this.admin.query(
      `CREATE TABLE ${this.effects} (id serial PRIMARY KEY, ref varchar(128) NOT NULL, amount integer NOT NULL)`,
    );
  }

  /** One node: its own DataSource on the shared schema, and module options on it. */
  async node(): Promise<{ options: OncelyModuleOptions; source: DataSource }> {
    const source = await this.schema.connect();
    const options: OncelyModuleOptions = {
      namespace: this.namespace,
      coordinator: new RedisFlightCoordinator({ ...services.redis }, { keyPrefix: this.keyPrefix }),
      store: new TypeOrmIdempotencyRecordStore(source),
      events: (event) => this.events.push(event),
    };
    return { options, source };
  }

  async effectRows(ref: string): Promise<number> {
    const [row] = await this.admin.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM ${this.effects} WHERE ref = $1`,
      [ref],
    );
    return row?.n ?? 0;
  }

  async recordRows(identityPart: string): Promise<number> {
    const [row] = await this.admin.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM ${this.schema.records} WHERE "key" LIKE $1`,
      [`%${identityPart}%`],
    );
    return row?.n ?? 0;
  }

  async stop(): Promise<void> {
    await this.schema.drop();
  }
}

/** Writes one effect row through the node's own connection, like a real handler would. */
export async function writeEffect(source: DataSource, schema: string, ref: string, amount: number) {
  await source.query(`INSERT INTO "${schema}"."effects" (ref, amount) VALUES ($1, $2)`, [
    ref,
    amount,
  ]);
}
