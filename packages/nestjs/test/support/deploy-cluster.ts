import {
  killAllWorkers,
  requireService,
  services,
  spawnWorker,
  type Worker,
} from '@oncely/testing-kit';
import { RedisClaimRegistry } from '@oncely/redis';
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

/** What `boot` starts a node with: everything but the cluster's own settings. */
export type NodeConfig = Omit<DeployNodeConfig, 'namespace' | 'keyPrefix' | 'schema' | 'store'>;

/** A boot the node refused, with the error it reported. */
export interface BootFailure {
  readonly failed: { readonly name: string; readonly message: string };
}

/** The node `boot` started; throws with the refusal when its boot was refused. */
export function bootedNode(booted: DeployNode | BootFailure): DeployNode {
  if ('failed' in booted) throw new Error(`expected a boot, got ${booted.failed.message}`);
  return booted;
}

/** The error a refused boot reported; throws when the node booted. */
export function refusedBoot(booted: DeployNode | BootFailure): BootFailure['failed'] {
  if (!('failed' in booted)) throw new Error('expected a refused boot, got a running node');
  return booted.failed;
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
  async start(config: NodeConfig, ready: string): Promise<DeployNode> {
    const worker = this.#spawn(config);
    const { port } = await worker.message<{ ready?: string; port: number }>(
      (message) => message.ready === ready,
      120_000,
    );
    return { worker, port };
  }

  /**
   * Starts a node with `config` and waits for its boot to end: the node when it reports `ready`,
   * else the error its refused boot reported (the worker has then exited).
   */
  async boot(config: NodeConfig): Promise<DeployNode | BootFailure> {
    const worker = this.#spawn(config);
    const message = await worker.message<{ ready?: string; port?: number; bootFailed?: object }>(
      (candidate) => candidate.ready !== undefined || candidate.bootFailed !== undefined,
      120_000,
    );
    if (message.bootFailed) {
      await worker.exited;
      return { failed: message.bootFailed as BootFailure['failed'] };
    }
    return { worker, port: message.port! };
  }

  #spawn(config: NodeConfig): Worker {
    const full: DeployNodeConfig = {
      namespace: this.namespace,
      keyPrefix: this.#keyPrefix,
      schema: this.#schema.name,
      store: this.store,
      ...config,
    };
    return spawnWorker(WORKER, { args: [JSON.stringify(full)] });
  }

  /**
   * The services holding an entry on the nodes' operation where its idempotency claims go (the
   * Redis store's key prefix, or the PostgreSQL schema's claims table), one per instance, sorted;
   * entries past their expiry left out.
   */
  async claimants(version = 'v1'): Promise<string[]> {
    if (this.store === 'redis') {
      const redis = new Redis({ ...services.redis });
      try {
        const registry = new RedisClaimRegistry(redis, { keyPrefix: this.#keyPrefix });
        const entries = await registry.entries({
          mechanism: 'idempotency',
          namespace: this.namespace,
          operation: 'payment-capture',
          version,
        });
        // Redis' clock to the millisecond: whole seconds would count an entry up to 999 ms
        // past its expiry as live.
        const [seconds, micros] = await redis.time();
        const nowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
        return entries
          .filter(({ expiresAt }) => (expiresAt ?? 0) > nowMs)
          .map(({ claim }) => claim?.owner ?? '?')
          .sort();
      } finally {
        await redis.quit();
      }
    }
    const rows = await this.#admin!.query<{ service: string }[]>(
      `SELECT service FROM "${this.#schema.name}"."oncely_claim" WHERE slot = $1 AND expires_at > $2 ORDER BY service`,
      [`idempotency|${this.namespace}:payment-capture:${version}`, Date.now()],
    );
    return rows.map(({ service }) => service);
  }

  async stop(node: DeployNode): Promise<void> {
    node.worker.send({ stop: true });
    await node.worker.exited;
  }

  /** What a node answered to `GET /quotes/:id`. */
  async quote(node: DeployNode, id: string): Promise<Omit<PaymentAnswer, 'retryAfter'>> {
    const response = await fetch(`http://127.0.0.1:${node.port}/quotes/${id}`);
    return {
      status: response.status,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      body: (await response.json()) as PaymentAnswer['body'],
    };
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
