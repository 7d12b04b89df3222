import { killAllWorkers, spawnWorker, type Worker } from '@oncely/testing-kit';
import type { Settlement } from '../support/counting-rmq.server.js';
import { PAID, type FreezePoint } from '../support/rabbitmq-consumer.constants.js';
import { RabbitmqAdmin } from '../support/rabbitmq-admin.js';
import { SharedBackends } from '../support/shared-backends.js';

const WORKER = 'packages/nestjs/test/support/rabbitmq-consumer.worker.ts';
const LEASE_TTL_MS = 2_000;

/** What a consumer process reports: see rabbitmq-consumer-node.ts. */
interface Report {
  readonly node: string;
  readonly ready?: string;
  readonly stopped?: string;
  readonly frozen?: FreezePoint;
  readonly messageId?: string;
  readonly effect?: string;
  readonly outcome?: string;
  readonly settlement?: Settlement;
}

/**
 * Consumer processes (a Nest microservice each, records in PostgreSQL, flights in Redis) on one
 * queue with manual acknowledgement; the first is SIGKILLed at a chosen point, the message is
 * redelivered to a second. Effects are rows in PostgreSQL, counted there.
 */
describe('a RabbitMQ consumer SIGKILLed before its ack (consumer processes, Redis + PostgreSQL)', () => {
  const backends = new SharedBackends();
  const rabbitmq = new RabbitmqAdmin();

  beforeAll(async () => {
    await rabbitmq.start();
    await backends.start();
  });

  afterAll(async () => {
    await killAllWorkers();
    await rabbitmq.stop();
    await backends.stop();
  });

  async function consumer(name: string, node: string, freeze: FreezePoint): Promise<Worker> {
    const { namespace, keyPrefix, schema } = backends;
    const args = [namespace, keyPrefix, schema.name, name, node, freeze, String(LEASE_TTL_MS)];
    const worker = spawnWorker(WORKER, { args });
    await worker.message<Report>((m) => m.ready === node, 60_000);
    return worker;
  }

  /** Publishes an event as `ClientRMQ.emit` would: Nest's packet `{ pattern, data }`. */
  function publish(name: string, data: unknown): void {
    rabbitmq.channel.sendToQueue(name, Buffer.from(JSON.stringify({ pattern: PAID, data })));
  }

  async function stop(worker: Worker): Promise<void> {
    worker.send({ stop: true });
    await worker.exited;
  }

  const reports = (worker: Worker) => worker.messages as Report[];
  const outcomes = (worker: Worker) => reports(worker).flatMap((r) => r.outcome ?? []);
  const effects = (worker: Worker) => reports(worker).flatMap((r) => r.effect ?? []);
  const settlements = (worker: Worker) => reports(worker).flatMap((r) => r.settlement ?? []);

  it('killed after its record completed, before its ack: the redelivery replays on a second consumer and is acked, one effect', async () => {
    const name = rabbitmq.queue('after-complete');
    const event = { messageId: 'paid-1', amount: 10, freeze: true };
    const first = await consumer(name, 'first', 'after-complete');
    publish(name, event);
    const frozen = await first.message<Report>((m) => m.frozen === 'after-complete');
    expect(frozen.messageId).toBe('paid-1');
    expect(await backends.effectRows('paid-1')).toBe(1);
    first.kill();
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(outcomes(first)).toEqual(['executed']);
    expect(settlements(first)).toEqual([]);

    const second = await consumer(name, 'second', 'never');
    await second.message<Report>((m) => m.settlement !== undefined);
    expect(settlements(second)).toEqual([
      { action: 'ack', requeue: false, data: event, redelivered: true },
    ]);
    expect(outcomes(second)).toEqual(['replayed']);
    expect(effects(second)).toEqual([]);
    await stop(second);
    expect(await backends.effectRows('paid-1')).toBe(1);
    expect(await rabbitmq.messages(name)).toBe(0);
  });

  it('killed after its effect, before its record completed: the redelivery waits out the lease and runs again, two effects', async () => {
    const name = rabbitmq.queue('after-effect');
    const event = { messageId: 'paid-2', amount: 20, freeze: true };
    const first = await consumer(name, 'first', 'after-effect');
    publish(name, event);
    const frozen = await first.message<Report>((m) => m.frozen === 'after-effect');
    expect(frozen.messageId).toBe('paid-2');
    first.kill();
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(outcomes(first)).toEqual([]);

    const second = await consumer(name, 'second', 'never');
    await second.message<Report>((m) => m.settlement !== undefined, LEASE_TTL_MS * 10);
    expect(settlements(second)).toEqual([
      { action: 'ack', requeue: false, data: event, redelivered: true },
    ]);
    expect(outcomes(second)).toEqual(['executed']);
    expect(effects(second)).toEqual(['paid-2']);
    await stop(second);
    // The effect is not in the record's transaction (message handlers cannot be transactional).
    expect(await backends.effectRows('paid-2')).toBe(2);
    expect(await rabbitmq.messages(name)).toBe(0);
  });
});
