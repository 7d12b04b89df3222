import {
  killAllWorkers,
  requireService,
  services,
  spawnWorker,
  type Worker,
} from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { PostgresSchema } from '../fixtures/postgres-schema.js';
import { uniqueNamespace } from '../fixtures/test-app.js';
import type { DeployNodeConfig } from './deploy-node.js';

const WORKER = 'packages/nestjs/test/support/deploy.worker.ts';

/** One payments process of a deploy, listening on `port`. */
export interface DeployNode {
  readonly worker: Worker;
  readonly port: number;
}

/** What a node answered to `POST /payments`. */
export interface PaymentAnswer {
  readonly status: number;
  readonly replayed: boolean;
  readonly retryAfter: number | undefined;
  readonly body: {
    version?: string;
    paymentId?: number;
    type?: string;
    owner?: string;
    foreignOwner?: string;
    detail?: string;
  };
}

/**
 * Payments processes (`deploy.worker.ts`) sharing one Redis key prefix and one PostgreSQL schema,
 * whose `payments` table holds one row per execution of the handler: the truth the deploy suites
 * count.
 */
export class DeployCluster {
  readonly namespace: string;
  readonly #schema = new PostgresSchema();
  readonly #keyPrefix: string;
  #admin: DataSource | undefined;

  constructor(
    private readonly store: DeployNodeConfig['store'],
    label: string,
  ) {
    this.namespace = uniqueNamespace(label);
    this.#keyPrefix = `oncely-${label}-${randomUUID().slice(0, 8)}:`;
  }

  async setUp(): Promise<void> {
    await requireService('redis');
    await requireService('postgres');
    this.#admin = await this.#schema.create();
    await this.#admin.query(
      `CREATE TABLE "${this.#schema.name}"."payments" (id serial PRIMARY KEY, idempotency_key varchar(64) NOT NULL, order_id varchar(64) NOT NULL, amount varchar(16) NOT NULL, version varchar(8) NOT NULL)`,
    );
  }

  async tearDown(): Promise<void> {
    await killAllWorkers();
    await this.#schema.drop();
    const redis = new Redis({ ...services.redis });
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${this.#keyPrefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    await redis.quit();
  }

  /** Starts a node with `config` and waits until it reports `ready`. */
  async start(
    config: Omit<DeployNodeConfig, 'namespace' | 'keyPrefix' | 'schema' | 'store'>,
    ready: string,
  ): Promise<DeployNode> {
    const full: DeployNodeConfig = {
      namespace: this.namespace,
      keyPrefix: this.#keyPrefix,
      schema: this.#schema.name,
      store: this.store,
      ...config,
    };
    const worker = spawnWorker(WORKER, { args: [JSON.stringify(full)] });
    const { port } = await worker.message<{ ready?: string; port: number }>(
      (message) => message.ready === ready,
      120_000,
    );
    return { worker, port };
  }

  async stop(node: DeployNode): Promise<void> {
    node.worker.send({ stop: true });
    await node.worker.exited;
  }

  async pay(
    node: DeployNode,
    key: string,
    body: object,
    headers: Record<string, string> = {},
  ): Promise<PaymentAnswer> {
    const response = await fetch(`http://127.0.0.1:${node.port}/payments`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-tenant': 't-1',
        'idempotency-key': key,
        ...headers,
      },
      body: JSON.stringify(body),
    });
    const retryAfter = response.headers.get('retry-after');
    return {
      status: response.status,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      retryAfter: retryAfter === null ? undefined : Number(retryAfter),
      body: (await response.json()) as PaymentAnswer['body'],
    };
  }

  /** The business rows per idempotency key, as the `version` of each execution, in order. */
  async executions(keys: readonly string[]): Promise<Record<string, string[]>> {
    const rows = await this.#admin!.query<{ idempotency_key: string; version: string }[]>(
      `SELECT idempotency_key, version FROM "${this.#schema.name}"."payments" WHERE idempotency_key = ANY($1) ORDER BY id`,
      [keys],
    );
    const byKey: Record<string, string[]> = Object.fromEntries(keys.map((key) => [key, []]));
    for (const row of rows) byKey[row.idempotency_key]!.push(row.version);
    return byKey;
  }
}
