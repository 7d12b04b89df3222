import { Controller, Inject, type INestMicroservice } from '@nestjs/common';
import {
  ClientProxyFactory,
  Ctx,
  EventPattern,
  MessagePattern,
  Payload,
  RmqContext,
  RmqRecordBuilder,
  Transport,
  type ClientProxy,
} from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { IdempotentKey, OncelyModule } from '@oncely/nestjs';
import { rabbitmqUrl } from '@oncely/testing-kit';
import type { Channel, Message } from 'amqplib';
import { setTimeout as sleep } from 'node:timers/promises';
import { lastValueFrom } from 'rxjs';
import { DataSource } from 'typeorm';
import { Executions, Gates } from '../fixtures/test-app.js';
import { CountingServerRMQ, type Settlement } from '../support/counting-rmq.server.js';
import { RabbitmqAdmin } from '../support/rabbitmq-admin.js';
import { SharedBackends, writeEffect } from '../support/shared-backends.js';

const CHARGE = 'payments.charge';
const SHIPPED = 'orders.shipped';
const TRACKED = 'orders.tracked';
const SLOW = 'orders.slow';
const FLAKY = 'orders.flaky';
const PLAIN = 'orders.plain';
const SCHEMA = Symbol('schema');
const SOURCE = Symbol('source');
/** How long a duplicate waits for a key in flight on another consumer before it is requeued. */
const SLOW_WAIT_MS = 1_000;
/** Ids whose first run failed, shared by the consumers (both run in this process). */
const failedOnce = new Set<string>();

interface OrderMessage {
  readonly messageId?: string;
  readonly amount: number;
}

const CONSUME = {
  namespace: 'message',
  operation: 'consume',
  // One consume operation for every pattern; the pattern in the scope keeps their records apart.
  shared: true,
  scope: 'params.topic',
  target: 'body.messageId',
  idempotencyKey: 'ignored',
  onBusy: 'wait',
} as const;

/** Handlers under oncely never ack: with manual acknowledgement oncely settles their messages. */
@Controller()
class OrdersConsumer {
  constructor(
    @Inject(Executions) private readonly executions: Executions,
    @Inject(Gates) private readonly gates: Gates,
    @Inject(SOURCE) private readonly source: DataSource,
    @Inject(SCHEMA) private readonly schema: string,
  ) {}

  @MessagePattern(CHARGE)
  @IdempotentKey(CONSUME)
  async charge(@Payload() message: OrderMessage) {
    const execution = this.executions.hit(`charge:${message.messageId}`);
    await this.effect(message);
    return { chargeId: `ch-${message.messageId}`, amount: message.amount, execution };
  }

  @EventPattern<string>(SHIPPED)
  @IdempotentKey(CONSUME)
  async shipped(@Payload() message: OrderMessage) {
    this.executions.hit(`shipped:${message.messageId}`);
    await this.effect(message);
  }

  /** The message id travels in the AMQP headers (`properties.headers`), not in the payload. */
  @EventPattern<string>(TRACKED)
  @IdempotentKey({ ...CONSUME, target: 'headers.message-id' })
  async tracked(@Payload() message: OrderMessage, @Ctx() context: RmqContext) {
    const { headers } = (
      context.getMessage() as { properties: { headers: Record<string, string> } }
    ).properties;
    this.executions.hit(`tracked:${headers['message-id']}`);
    await this.effect({ ...message, messageId: headers['message-id'] });
  }

  @EventPattern<string>(SLOW)
  @IdempotentKey({ ...CONSUME, wait: SLOW_WAIT_MS })
  async slow(@Payload() message: OrderMessage) {
    this.executions.hit(`slow:${message.messageId}`);
    await this.gates.pass(`slow:${message.messageId}`);
    await this.effect(message);
  }

  /** Fails its first run on either consumer, before any effect; succeeds on the redelivery. */
  @EventPattern<string>(FLAKY)
  @IdempotentKey(CONSUME)
  async flaky(@Payload() message: OrderMessage) {
    this.executions.hit(`flaky:${message.messageId}`);
    if (!failedOnce.has(message.messageId ?? '')) {
      failedOnce.add(message.messageId ?? '');
      throw new Error('the payment provider timed out');
    }
    await this.effect(message);
  }

  /** Not under oncely: the handler settles its own message, as any manual-ack handler does. */
  @EventPattern<string>(PLAIN)
  async plain(@Payload() message: OrderMessage, @Ctx() context: RmqContext) {
    this.executions.hit(`plain:${message.messageId}`);
    await this.effect(message);
    (context.getChannelRef() as Channel).ack(context.getMessage() as Message);
  }

  private effect(message: OrderMessage): Promise<void> {
    return writeEffect(this.source, this.schema, message.messageId ?? 'none', message.amount);
  }
}

/** Consumers on one queue of this test, and a client publishing to it. */
interface Queue {
  readonly name: string;
  readonly dead: string;
  readonly servers: CountingServerRMQ[];
  readonly client: ClientProxy;
}

describe('message handlers over RabbitMQ (manual acknowledgement, two consumers on one queue)', () => {
  const backends = new SharedBackends();
  const apps: INestMicroservice[] = [];
  const clients: ClientProxy[] = [];
  const sources: DataSource[] = [];
  const rabbitmq = new RabbitmqAdmin();

  beforeAll(async () => {
    await rabbitmq.start();
    await backends.start();
  });

  afterEach(async () => {
    await closeConsumers();
  });

  afterAll(async () => {
    await rabbitmq.stop();
    await backends.stop();
  });

  async function closeConsumers(): Promise<void> {
    await Promise.allSettled(clients.splice(0).map((client) => client.close()));
    await Promise.allSettled(apps.splice(0).map((app) => app.close()));
    await Promise.allSettled(sources.splice(0).map((source) => source.destroy()));
  }

  /**
   * A queue of its own for one test (dead-lettering to `<name>.dead`), two consumers with
   * prefetch 1, so a duplicate published while the first is running goes to the other consumer.
   */
  async function queue(test: string, { noAck = false } = {}): Promise<Queue> {
    const name = rabbitmq.queue(test);
    const dead = rabbitmq.queue(`${test}.dead`);
    await rabbitmq.channel.assertQueue(dead, { durable: false });
    const queueOptions = {
      durable: false,
      arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': dead },
    };
    const servers: CountingServerRMQ[] = [];
    for (let i = 0; i < 2; i++) {
      const { options, source } = await backends.node();
      sources.push(source);
      const module = await Test.createTestingModule({
        imports: [OncelyModule.forRoot({ ...options, rmq: { noAck } })],
        controllers: [OrdersConsumer],
        providers: [
          Executions,
          Gates,
          { provide: SOURCE, useValue: source },
          { provide: SCHEMA, useValue: backends.schema.name },
        ],
      }).compile();
      const server = new CountingServerRMQ({
        urls: [rabbitmqUrl()],
        queue: name,
        queueOptions,
        noAck,
        prefetchCount: 1,
      });
      const app = module.createNestMicroservice({ strategy: server, logger: false });
      await app.listen();
      apps.push(app);
      servers.push(server);
    }
    const client = ClientProxyFactory.create({
      transport: Transport.RMQ,
      options: { urls: [rabbitmqUrl()], queue: name, queueOptions },
    });
    await client.connect();
    clients.push(client);
    return { name, dead, servers, client };
  }

  const all = (q: Queue) => q.servers.flatMap((server) => server.settlements);
  const count = (q: Queue, action: Settlement['action'], requeue?: boolean) =>
    q.servers.reduce((sum, server) => sum + server.count(action, requeue), 0);
  const executions = (name: string) =>
    apps.reduce((sum, app) => sum + app.get(Executions).of(name), 0);
  const emit = (q: Queue, pattern: string, message: unknown) =>
    lastValueFrom(q.client.emit(pattern, message));

  /** Waits for `expected` settlements, then long enough for any extra one to show. */
  async function settled(q: Queue, expected: number, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (all(q).length < expected && Date.now() < deadline) await sleep(20);
    await sleep(300);
  }

  /** Ready messages once every consumer is gone: a message left unsettled is back in the queue. */
  async function leftInQueue(q: Queue): Promise<{ queue: number; dead: number }> {
    await closeConsumers();
    return { queue: await rabbitmq.messages(q.name), dead: await rabbitmq.messages(q.dead) };
  }

  it('acks every copy of an event published 5 times and runs the handler once', async () => {
    const q = await queue('shipped');
    const event = { messageId: 'ship-1', amount: 1 };
    await Promise.all(Array.from({ length: 5 }, () => emit(q, SHIPPED, event)));
    await settled(q, 5);
    expect(executions('shipped:ship-1')).toBe(1);
    expect(count(q, 'ack')).toBe(5);
    expect(count(q, 'nack') + count(q, 'reject')).toBe(0);
    expect(await backends.effectRows('ship-1')).toBe(1);
    expect(await leftInQueue(q)).toEqual({ queue: 0, dead: 0 });
  });

  it('acks a redelivered request and answers it with the stored reply', async () => {
    const q = await queue('charge');
    const send = () => lastValueFrom(q.client.send(CHARGE, { messageId: 'pay-1', amount: 9 }));
    const first = await send();
    const again = [await send(), await send()];
    expect(first).toEqual({ chargeId: 'ch-pay-1', amount: 9, execution: 1 });
    expect(again).toEqual([first, first]);
    await settled(q, 3);
    expect(executions('charge:pay-1')).toBe(1);
    expect(count(q, 'ack')).toBe(3);
    expect(count(q, 'nack') + count(q, 'reject')).toBe(0);
    expect(await backends.effectRows('pay-1')).toBe(1);
    expect(await leftInQueue(q)).toEqual({ queue: 0, dead: 0 });
  });

  it('rejects a reused id with another payload, and a message without an id, to the dead-letter queue', async () => {
    const q = await queue('refused');
    await emit(q, SHIPPED, { messageId: 'ship-2', amount: 7 });
    await settled(q, 1);
    await emit(q, SHIPPED, { messageId: 'ship-2', amount: 8 });
    await emit(q, SHIPPED, { amount: 9 });
    await settled(q, 3);
    expect(executions('shipped:ship-2')).toBe(1);
    expect(count(q, 'ack')).toBe(1);
    expect(count(q, 'reject', false)).toBe(2);
    expect(count(q, 'nack') + count(q, 'reject', true)).toBe(0);
    const rejected = all(q).filter((s) => s.action === 'reject');
    expect(rejected.map((s) => s.data)).toEqual(
      expect.arrayContaining([{ messageId: 'ship-2', amount: 8 }, { amount: 9 }]),
    );
    expect(await backends.effectRows('ship-2')).toBe(1);
    expect(await leftInQueue(q)).toEqual({ queue: 0, dead: 2 });
  });

  it('requeues a duplicate still in flight on the other consumer after its wait, and acks its redelivery', async () => {
    const q = await queue('slow');
    const event = { messageId: 'slow-1', amount: 3 };
    await emit(q, SLOW, event);
    await Promise.race(apps.map((app) => app.get(Gates).entered$('slow:slow-1')));
    await emit(q, SLOW, event);
    await settled(q, 1, SLOW_WAIT_MS * 5);
    expect(all(q)).toEqual([{ action: 'nack', requeue: true, data: event, redelivered: false }]);
    apps.forEach((app) => app.get(Gates).open('slow:slow-1'));
    await settled(q, 3, SLOW_WAIT_MS * 5);
    expect(executions('slow:slow-1')).toBe(1);
    expect(count(q, 'nack', true)).toBe(1);
    expect(count(q, 'ack')).toBe(2);
    expect(all(q).filter((s) => s.redelivered)).toEqual([
      { action: 'ack', requeue: false, data: event, redelivered: true },
    ]);
    expect(count(q, 'reject')).toBe(0);
    expect(await backends.effectRows('slow-1')).toBe(1);
    expect(await leftInQueue(q)).toEqual({ queue: 0, dead: 0 });
  });

  it('requeues a message whose handler threw; its redelivery runs again and is acked', async () => {
    const q = await queue('flaky');
    const event = { messageId: 'flaky-1', amount: 4 };
    await emit(q, FLAKY, event);
    await settled(q, 2);
    expect(executions('flaky:flaky-1')).toBe(2);
    expect(all(q)).toEqual([
      { action: 'nack', requeue: true, data: event, redelivered: false },
      { action: 'ack', requeue: false, data: event, redelivered: true },
    ]);
    expect(await backends.effectRows('flaky-1')).toBe(1);
    expect(await leftInQueue(q)).toEqual({ queue: 0, dead: 0 });
  });

  it('keys an event by an AMQP header', async () => {
    const q = await queue('tracked');
    const publish = (id: string) =>
      emit(
        q,
        TRACKED,
        new RmqRecordBuilder({ amount: 2 }).setOptions({ headers: { 'message-id': id } }).build(),
      );
    await Promise.all([publish('trk-1'), publish('trk-1'), publish('trk-1'), publish('trk-2')]);
    await settled(q, 4);
    expect(executions('tracked:trk-1')).toBe(1);
    expect(executions('tracked:trk-2')).toBe(1);
    expect(count(q, 'ack')).toBe(4);
    expect(await backends.effectRows('trk-1')).toBe(1);
    expect(await backends.effectRows('trk-2')).toBe(1);
    expect(await leftInQueue(q)).toEqual({ queue: 0, dead: 0 });
  });

  it('leaves the messages of handlers without oncely to the app', async () => {
    const q = await queue('plain');
    await emit(q, PLAIN, { messageId: 'plain-1', amount: 5 });
    await emit(q, PLAIN, { messageId: 'plain-2', amount: 5 });
    await settled(q, 2);
    expect(executions('plain:plain-1') + executions('plain:plain-2')).toBe(2);
    expect(all(q).map((s) => s.action)).toEqual(['ack', 'ack']);
    expect(await leftInQueue(q)).toEqual({ queue: 0, dead: 0 });
  });

  it('settles nothing on a consumer with automatic acknowledgement (noAck: true)', async () => {
    const q = await queue('auto', { noAck: true });
    const event = { messageId: 'auto-1', amount: 6 };
    await Promise.all(Array.from({ length: 3 }, () => emit(q, SHIPPED, event)));
    await emit(q, SHIPPED, { messageId: 'auto-2', amount: 6 });
    const deadline = Date.now() + 15_000;
    while (executions('shipped:auto-2') === 0 && Date.now() < deadline) await sleep(20);
    // An ack on a noAck channel would close it (PRECONDITION_FAILED): auto-2 would never run.
    expect(executions('shipped:auto-1')).toBe(1);
    expect(executions('shipped:auto-2')).toBe(1);
    expect(all(q)).toEqual([]);
    expect(await leftInQueue(q)).toEqual({ queue: 0, dead: 0 });
  });
});
