/**
 * Durable-record throughput: `begin` + `complete` pairs per second through
 * `TypeOrmIdempotencyRecordStore`, next to a bare INSERT + UPDATE of the same values on a table
 * of the same shape, on PostgreSQL, MariaDB and SQLite, in the same run with alternating rounds.
 * Run: `npm run bench:records` (not a test: it prints figures, it asserts nothing). Each database
 * gets its own schema, database or file, dropped at the end.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoredResponse } from '@oncely/core';
import { services } from '@oncely/testing-kit';
import { TypeOrmIdempotencyRecordStore, withIdempotencyRecords } from '@oncely/typeorm';
import { DataSource, Table, type DataSourceOptions } from 'typeorm';
import { recordDialectOf } from '../src/record-dialect.js';
import { recordColumns } from '../src/record-table.js';
import { tableColumnOptions } from '../src/table-column-options.js';

const ROUNDS = 7;
const timing = { leaseTtlMs: 30_000, retentionMs: 86_400_000 };
const response: StoredResponse = {
  status: 201,
  headers: { 'content-type': 'application/json; charset=utf-8', location: '/orders/77' },
  body: {
    kind: 'json',
    value: { id: 77, status: 'accepted', amount: '129.90', currency: 'EUR', items: 4, note: 'ok' },
  },
};

interface Target {
  readonly name: string;
  readonly pairsPerRound: number;
  readonly concurrency: number;
  open(): Promise<{ options: DataSourceOptions; drop(): Promise<void> }>;
}

const runId = randomBytes(4).toString('hex');

const targets: Target[] = [
  {
    name: 'PostgreSQL',
    pairsPerRound: 2_000,
    concurrency: 8,
    async open() {
      const { host, port, username, password, database } = services.postgres;
      const base = { type: 'postgres' as const, host, port, username, password, database };
      const schema = `oncely_bench_${runId}`;
      await admin(base, `CREATE SCHEMA "${schema}"`);
      return {
        options: { ...base, schema, poolSize: 8 },
        drop: () => admin(base, `DROP SCHEMA "${schema}" CASCADE`),
      };
    },
  },
  {
    name: 'MariaDB',
    pairsPerRound: 2_000,
    concurrency: 8,
    async open() {
      const { host, port, username, password } = services.mariadb;
      const base = { type: 'mariadb' as const, host, port, username, password };
      const database = `oncely_bench_${runId}`;
      await admin(base, `CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4`);
      return {
        options: { ...base, database, poolSize: 8 },
        drop: () => admin(base, `DROP DATABASE \`${database}\``),
      };
    },
  },
  {
    name: 'SQLite',
    pairsPerRound: 5_000,
    concurrency: 1,
    async open() {
      const directory = mkdtempSync(join(tmpdir(), 'oncely-bench-'));
      return {
        options: {
          type: 'better-sqlite3',
          database: join(directory, 'bench.sqlite'),
          enableWAL: true,
        },
        drop: async () => rmSync(directory, { recursive: true, force: true }),
      };
    },
  },
];

async function admin(options: DataSourceOptions, sql: string): Promise<void> {
  const dataSource = await new DataSource(options).initialize();
  try {
    await dataSource.query(sql);
  } finally {
    await dataSource.destroy();
  }
}

/** A table with the records table's exact columns and indexes, for the bare statements. */
async function createBaselineTable(dataSource: DataSource, name: string): Promise<string> {
  const dialect = recordDialectOf(dataSource.options.type);
  const runner = dataSource.createQueryRunner();
  try {
    await runner.createTable(
      new Table({
        name,
        columns: recordColumns(dialect).map(tableColumnOptions),
        indices: [
          { name: `UQ_${name}_key_hash`, columnNames: ['key_hash'], isUnique: true },
          { name: `IDX_${name}_expires_at`, columnNames: ['expires_at'] },
        ],
      }),
    );
  } finally {
    await runner.release();
  }
  const { schema } = dataSource.driver.parseTableName(name);
  const parts = dialect === 'postgres' && schema ? [schema, name] : [name];
  return parts.map((part) => dataSource.driver.escape(part)).join('.');
}

function bareStatements(dataSource: DataSource, table: string) {
  const numbered = (sql: string) => {
    if (dataSource.options.type !== 'postgres') return sql;
    let index = 0;
    return sql.replace(/\?/g, () => `$${++index}`);
  };
  const c = (name: string) => dataSource.driver.escape(name);
  return {
    insert: numbered(
      `INSERT INTO ${table} (${['key_hash', 'key', 'fingerprint', 'status', 'owner_token', 'fence', 'lease_expires_at', 'retention_ms', 'created_at', 'expires_at'].map(c).join(', ')}) VALUES (?, ?, ?, 'in_progress', ?, 1, ?, ?, ?, ?)`,
    ),
    update: numbered(
      `UPDATE ${table} SET ${c('status')} = 'completed', ${c('response_status')} = ?, ${c('response_headers')} = ?, ${c('response_body_kind')} = ?, ${c('response_body')} = ?, ${c('completed_at')} = ?, ${c('expires_at')} = ? WHERE ${c('key_hash')} = ?`,
    ),
  };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Runs `pairs` operations on `concurrency` workers; returns operations per second. */
async function measure(pairs: number, concurrency: number, pair: () => Promise<void>) {
  let remaining = pairs;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (remaining > 0) {
        remaining -= 1;
        await pair();
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return pairs / seconds;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const format = (value: number) => value.toFixed(0).padStart(7);

async function benchmark(target: Target): Promise<void> {
  const place = await target.open();
  const dataSource = await new DataSource(withIdempotencyRecords(place.options)).initialize();
  try {
    await dataSource.runMigrations();
    const bare = bareStatements(
      dataSource,
      await createBaselineTable(dataSource, `oncely_bench_bare_${runId}`),
    );
    const store = new TypeOrmIdempotencyRecordStore(dataSource);
    const digest = sha256('payload');

    const storePair = async () => {
      const outcome = await store.begin(`bench:order-create:v1:t1:${randomUUID()}`, digest, timing);
      if (outcome.kind !== 'acquired') throw new Error(`unexpected ${outcome.kind}`);
      await store.complete(outcome.lease, response);
    };
    const barePair = async () => {
      const identity = `bench:order-create:v1:t1:${randomUUID()}`;
      const keyHash = sha256(identity);
      const now = Date.now();
      await dataSource.query(bare.insert, [
        keyHash,
        identity,
        digest,
        randomUUID(),
        now + timing.leaseTtlMs,
        timing.retentionMs,
        now,
        now + timing.leaseTtlMs,
      ]);
      await dataSource.query(bare.update, [
        response.status,
        JSON.stringify(response.headers),
        response.body.kind,
        Buffer.from(JSON.stringify(response.body.kind === 'json' ? response.body.value : null)),
        now,
        now + timing.retentionMs,
        keyHash,
      ]);
    };

    // Warm-up: connections, statement caches, JIT.
    await measure(500, target.concurrency, barePair);
    await measure(500, target.concurrency, storePair);

    const bareRates: number[] = [];
    const storeRates: number[] = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      const bareRate = await measure(target.pairsPerRound, target.concurrency, barePair);
      const storeRate = await measure(target.pairsPerRound, target.concurrency, storePair);
      bareRates.push(bareRate);
      storeRates.push(storeRate);
      console.log(
        `  round ${round}: bare ${format(bareRate)} pairs/s   store ${format(storeRate)} pairs/s   ratio ${(storeRate / bareRate).toFixed(2)}`,
      );
    }
    const ratios = storeRates.map((rate, index) => rate / bareRates[index]!);
    console.log(
      `  median:  bare ${format(median(bareRates))} pairs/s   store ${format(median(storeRates))} pairs/s   median round ratio ${median(ratios).toFixed(2)}`,
    );
  } finally {
    await dataSource.destroy();
    await place.drop();
  }
}

console.log(
  `begin+complete pairs/s vs bare INSERT + UPDATE, same table shape, ${ROUNDS} alternating rounds`,
);
for (const target of targets) {
  console.log(
    `${target.name} (concurrency ${target.concurrency}, ${target.pairsPerRound} pairs per round)`,
  );
  await benchmark(target);
}
