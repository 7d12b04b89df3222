import type { INestApplication } from '@nestjs/common';
import { requireService, services } from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import type { DemoConfig } from '../../src/config/demo-config.js';
import { createDemoApp } from '../../src/create-demo-app.js';
import { ExecutionStats } from '../../src/stats/execution-stats.service.js';

/**
 * The demo running in-process on one set of stores: one node on the embedded default (SQLite
 * file, in-memory coordinator), or two nodes sharing Redis and a PostgreSQL schema of this run.
 */
export interface DemoBackend {
  readonly name: string;
  /** Base URLs of the running nodes (each listening on an ephemeral port). */
  readonly urls: readonly string[];
  readonly apps: readonly INestApplication[];
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Handler executions of `operation`, summed over the nodes. */
  executions(operation: string): number;
  /** Rows of a demo table matching `column = value`. */
  countRows(table: 'demo_order' | 'demo_payment', column: string, value: string): Promise<number>;
}

abstract class BaseBackend implements DemoBackend {
  abstract readonly name: string;
  apps: INestApplication[] = [];
  urls: string[] = [];

  abstract start(): Promise<void>;
  abstract stop(): Promise<void>;

  protected async startNode(config: DemoConfig): Promise<void> {
    const app = await createDemoApp(config, false);
    await app.listen(0, '127.0.0.1');
    this.apps.push(app);
    this.urls.push(await app.getUrl());
  }

  protected async closeNodes(): Promise<void> {
    await Promise.allSettled(this.apps.map((app) => app.close()));
  }

  executions(operation: string): number {
    return this.apps.reduce(
      (sum, app) => sum + (app.get(ExecutionStats).snapshot()[operation] ?? 0),
      0,
    );
  }

  async countRows(table: string, column: string, value: string): Promise<number> {
    const source = this.apps[0]!.get(DataSource);
    const placeholder = source.driver.options.type === 'postgres' ? '$1' : '?';
    const [row] = await source.query<{ n: number | string }[]>(
      `SELECT count(*) AS n FROM ${this.qualified(table)} WHERE ${column} = ${placeholder}`,
      [value],
    );
    return Number(row?.n);
  }

  protected qualified(table: string): string {
    return table;
  }
}

/** The embedded default: a SQLite file of this run, the in-memory coordinator, one node. */
export class EmbeddedBackend extends BaseBackend {
  readonly name = 'embedded default (SQLite + in-memory coordinator)';
  private readonly dir = mkdtempSync(join(tmpdir(), 'oncely-demo-'));

  async start(): Promise<void> {
    await this.startNode({
      port: 0,
      database: { kind: 'sqlite', file: join(this.dir, 'demo.sqlite') },
      redisKeyPrefix: 'unused:',
      namespace: 'demo',
    });
  }

  async stop(): Promise<void> {
    await this.closeNodes();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Two nodes sharing Redis (a key prefix of this run) and a PostgreSQL schema of this run. */
export class RedisPostgresBackend extends BaseBackend {
  readonly name = 'Redis + PostgreSQL, two nodes';
  readonly schema = `oncely_demo_${randomBytes(5).toString('hex')}`;
  readonly keyPrefix = `oncely-demo-test-${randomBytes(4).toString('hex')}:`;
  private admin?: DataSource;
  private redis?: Redis;

  async start(): Promise<void> {
    await requireService('redis');
    await requireService('postgres');
    const { host, port, username, database } = services.postgres;
    const url = `postgres://${username}@${host}:${port}/${database}`;
    this.admin = new DataSource({ type: 'postgres', url });
    await this.admin.initialize();
    await this.admin.query(`CREATE SCHEMA "${this.schema}"`);
    this.redis = new Redis({ ...services.redis });
    const config: DemoConfig = {
      port: 0,
      database: { kind: 'postgres', url, schema: this.schema },
      redisUrl: `redis://${services.redis.host}:${services.redis.port}`,
      redisKeyPrefix: this.keyPrefix,
      namespace: 'demo',
    };
    // One after the other: the second node finds the migrations already run.
    await this.startNode(config);
    await this.startNode(config);
  }

  protected override qualified(table: string): string {
    return `"${this.schema}"."${table}"`;
  }

  async stop(): Promise<void> {
    await this.closeNodes();
    await this.admin?.query(`DROP SCHEMA IF EXISTS "${this.schema}" CASCADE`);
    await this.admin?.destroy();
    if (this.redis) {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await this.redis.scan(
          cursor,
          'MATCH',
          `${this.keyPrefix}*`,
          'COUNT',
          1000,
        );
        keys.push(...batch);
        cursor = next;
      } while (cursor !== '0');
      if (keys.length > 0) await this.redis.del(...keys);
      await this.redis.quit();
    }
  }
}
