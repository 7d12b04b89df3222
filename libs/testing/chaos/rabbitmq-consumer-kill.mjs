// RabbitMQ consumers with manual acknowledgement, SIGKILLed after their effect and its record,
// before their ack. Three consumer processes share one queue (prefetch 1) and consume a stream of distinct events
// and duplicates. Three events are flagged: the consumer that completes one stops dead before its
// ack, is SIGKILLed and replaced, and RabbitMQ redelivers the message to another consumer, which
// must replay it. The ground truth: effect rows in PostgreSQL, the outcome and the settlement of
// every delivery as each process reported them, and the queues once every consumer is gone.
import { rabbitmqUrl, requireService, startRedisServer } from '@oncely/testing-kit';
import { withIdempotencyRecords } from '@oncely/typeorm';
import amqp from 'amqplib';
import { DataSource } from 'typeorm';
import { startConsumers } from './consumer-fleet.mjs';
import { verifyConsumption } from './consumption-checks.mjs';
import { run, scenarioDatabase, sleep } from './scenario-kit.mjs';

const NAME = 'rabbitmq-consumer-kill';
/** The consumer's pattern (PAID in packages/nestjs/test/support/rabbitmq-consumer.constants.ts). */
const PAID = 'orders.paid';
const EVENTS = 300;
/**
 * The events whose consumer is killed once it completed them: a quarter, a half and three
 * quarters into the stream (75 also has a concurrent copy, which may meet the dead consumer's
 * lease and wait it out before replaying).
 */
const FLAGGED = [75, 150, 225];
const LEASE_TTL_MS = 2_000;
/**
 * Publications per tick of the stream, one tick every `TICK_MS`: ~40 a second, about what three
 * consumers take on a busy 2-core box, so the kills fall while the stream is still published.
 */
const PER_TICK = 2;
const TICK_MS = 50;
const DRAIN_DEADLINE_MS = 60_000;
/** The longest any single broker operation may take: a stalled broker must not hang the run. */
const BROKER_DEADLINE_MS = 15_000;

/**
 * The publications, in order: every event once; every tenth (5, 15, …) again right after itself,
 * so another consumer takes the copy while the first runs; and from the 20th on, every tenth
 * (20, 30, …) followed by event i − 17 again, a late copy of a record usually complete by then.
 */
function streamOf(events) {
  const publications = [];
  events.forEach((event, i) => {
    publications.push(event);
    if (i % 10 === 5) publications.push(event);
    if (i % 10 === 0 && i >= 20) publications.push(events[i - 17]);
  });
  return publications;
}

export async function rabbitmqConsumerKill() {
  const started = Date.now();
  const row = { scenario: NAME, sent: 0, duplicates: 0, lateRetries: 0, faults: 0, failures: [] };
  const events = Array.from({ length: EVENTS }, (_, i) => ({
    messageId: `paid-${run}-${String(i).padStart(3, '0')}`,
    amount: i + 1,
    ...(FLAGGED.includes(i) && { freeze: true }),
  }));
  const publications = streamOf(events);
  const queue = `oncely-chaos-${run}.${NAME}`;
  const deadLetterQueue = `${queue}.dead`;
  let database;
  let db;
  let redis;
  let connection;
  let consumers;
  try {
    await requireService('rabbitmq');
    database = await scenarioDatabase(NAME);
    db = await database.create();
    await prepareDatabase(database.url);
    redis = await startRedisServer();
    connection = await within(amqp.connect(rabbitmqUrl()), 'connecting to RabbitMQ');
    const channel = await connection.createConfirmChannel();
    // The same arguments as the consumers assert, or RabbitMQ refuses the second declaration.
    await channel.assertQueue(deadLetterQueue, { durable: false });
    await channel.assertQueue(queue, {
      durable: false,
      arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': deadLetterQueue },
    });

    consumers = await startConsumers({
      args: (node) => [
        `chaos-${run}`,
        `chaos-${run}:`,
        'public',
        queue,
        node,
        'after-complete',
        String(LEASE_TTL_MS),
        deadLetterQueue,
      ],
      env: { ...postgresEnv(database.url), REDIS_HOST: redis.host, REDIS_PORT: String(redis.port) },
    });

    for (let i = 0; i < publications.length; i += PER_TICK) {
      for (const data of publications.slice(i, i + PER_TICK)) {
        channel.sendToQueue(queue, Buffer.from(JSON.stringify({ pattern: PAID, data })));
        row.sent += 1;
      }
      await sleep(TICK_MS);
    }
    await within(channel.waitForConfirms(), 'publisher confirms');
    row.duplicates = row.sent - EVENTS;

    const acks = () =>
      consumers.processes
        .flatMap(({ worker }) => worker.messages)
        .filter((m) => m.settlement?.action === 'ack').length;
    const deadline = Date.now() + DRAIN_DEADLINE_MS;
    while (
      (acks() < publications.length ||
        consumers.kills.length < FLAGGED.length ||
        consumers.replacing) &&
      Date.now() < deadline
    ) {
      await sleep(50);
    }
    if (Date.now() >= deadline) {
      row.failures.push(
        `not drained in ${DRAIN_DEADLINE_MS / 1000} s: ${acks()} acks for ${publications.length} publications, ${consumers.kills.length} kills`,
      );
    }
    const stuck = await consumers.stop();
    const left = {
      queue: await within(channel.checkQueue(queue), 'checking the queue'),
      dead: await within(channel.checkQueue(deadLetterQueue), 'checking the dead-letter queue'),
    };
    const { rows: effects } = await db.query(
      'SELECT ref, count(*)::int AS n FROM effects GROUP BY ref',
    );
    const verdict = verifyConsumption({ events, publications, consumers, effects, left, stuck });
    row.failures.push(...consumers.errors, ...verdict.failures);
    Object.assign(row, {
      faults: consumers.kills.length,
      operations: EVENTS,
      rows: verdict.rows,
      executions: verdict.executions,
      byStatus: verdict.settlements,
      notes: verdict.notes,
    });
  } catch (error) {
    row.failures.push(`scenario error: ${error?.stack ?? error}`);
  } finally {
    await consumers?.kill().catch(() => {});
    if (connection) {
      const cleanup = await within(connection.createChannel(), 'cleanup').catch(() => undefined);
      for (const name of [queue, deadLetterQueue]) {
        await within(cleanup?.deleteQueue(name), 'cleanup').catch(() => {});
      }
      await within(connection.close(), 'cleanup').catch(() => {});
    }
    await redis?.stop().catch(() => {});
    await db?.end().catch(() => {});
    await database?.drop();
  }
  row.byStatus ??= {};
  row.seconds = Math.round((Date.now() - started) / 1000);
  return row;
}

/** `promise`, or a rejection once `BROKER_DEADLINE_MS` passed without an answer. */
function within(promise, what) {
  let timer;
  const expiry = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: no answer from RabbitMQ in ${BROKER_DEADLINE_MS} ms`)),
      BROKER_DEADLINE_MS,
    );
  });
  return Promise.race([promise, expiry]).finally(() => clearTimeout(timer));
}

/** The records table (oncely's migrations) and the `effects` table the consumers write to. */
async function prepareDatabase(url) {
  const source = new DataSource(withIdempotencyRecords({ type: 'postgres', url }));
  await source.initialize();
  try {
    await source.runMigrations();
    // No unique constraint on `ref`: a second effect of one event must show as a second row.
    await source.query(
      'CREATE TABLE effects (id serial PRIMARY KEY, ref varchar(128) NOT NULL, amount integer NOT NULL)',
    );
  } finally {
    await source.destroy();
  }
}

/** The consumer worker reads its PostgreSQL from the PG* variables (`services.postgres`). */
function postgresEnv(url) {
  const { hostname, port, username, password, pathname } = new URL(url);
  return {
    PGHOST: hostname,
    PGPORT: port || '5432',
    PGUSER: decodeURIComponent(username) || 'postgres',
    PGPASSWORD: decodeURIComponent(password),
    PGDATABASE: pathname.slice(1),
  };
}
