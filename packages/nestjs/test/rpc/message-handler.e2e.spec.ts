import { Controller, Inject, type INestMicroservice } from '@nestjs/common';
import {
  ClientProxyFactory,
  Ctx,
  EventPattern,
  MessagePattern,
  NatsContext,
  NatsRecordBuilder,
  Payload,
  Transport,
  type ClientProxy,
} from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { MissingKeyFieldError, type OncelyEvent } from '@oncely/core';
import { IdempotentKey, OncelyCallErrorCode, OncelyModule } from '@oncely/nestjs';
import { randomUUID } from 'node:crypto';
import { lastValueFrom } from 'rxjs';
import { DataSource } from 'typeorm';
import { Executions, Gates } from '../fixtures/test-app.js';
import { nats, requireBroker } from '../support/require-broker.js';
import { SharedBackends, writeEffect } from '../support/shared-backends.js';

const run = randomUUID().slice(0, 8);
const CHARGE = `oncely.${run}.charge`;
const SHIPPED = `oncely.${run}.shipped`;
const TRACKED = `oncely.${run}.tracked`;
const SCHEMA = Symbol('schema');
const SOURCE = Symbol('source');

interface ChargeMessage {
  readonly messageId: string;
  readonly amount: number;
}

@Controller()
class PaymentsConsumer {
  constructor(
    @Inject(Executions) private readonly executions: Executions,
    @Inject(Gates) private readonly gates: Gates,
    @Inject(SOURCE) private readonly source: DataSource,
    @Inject(SCHEMA) private readonly schema: string,
  ) {}

  /** Request/response: a duplicate gets the first reply again. */
  @MessagePattern(CHARGE)
  @IdempotentKey({
    namespace: 'message',
    operation: 'consume',
    // One consume operation for every topic; the topic in the scope keeps their records apart.
    shared: true,
    scope: 'params.topic',
    target: 'body.messageId',
    idempotencyKey: 'ignored',
    onBusy: 'wait',
  })
  async charge(@Payload() message: ChargeMessage) {
    const execution = this.executions.hit(`charge:${message.messageId}`);
    await this.gates.pass(message.messageId);
    await writeEffect(this.source, this.schema, message.messageId, message.amount);
    return { chargeId: `ch-${message.messageId}`, amount: message.amount, execution };
  }

  /** An event: a duplicate is acknowledged without running the handler again. */
  @EventPattern<string>(SHIPPED)
  @IdempotentKey({
    namespace: 'message',
    operation: 'consume',
    shared: true,
    scope: 'params.topic',
    target: 'body.messageId',
    idempotencyKey: 'ignored',
    onBusy: 'wait',
  })
  async shipped(@Payload() message: ChargeMessage) {
    this.executions.hit(`shipped:${message.messageId}`);
    await writeEffect(this.source, this.schema, message.messageId, message.amount);
  }

  /** The message id travels in a transport header, not in the payload. */
  @EventPattern<string>(TRACKED)
  @IdempotentKey({
    namespace: 'message',
    operation: 'consume-tracked',
    scope: 'params.topic',
    target: 'headers.message-id',
    idempotencyKey: 'ignored',
    onBusy: 'wait',
  })
  async tracked(@Payload() message: { amount: number }, @Ctx() context: NatsContext) {
    const id = context.getHeaders()?.get('Message-Id') ?? 'none';
    this.executions.hit(`tracked:${id}`);
    await writeEffect(this.source, this.schema, id, message.amount);
  }
}

/** Resolves once `count` decisions (executed or replayed) were made for `key`. */
function decisions(events: OncelyEvent[], key: string, count: number): Promise<OncelyEvent[]> {
  return new Promise((resolve) => {
    const check = () => {
      const seen = events.filter(
        (event) =>
          event.mechanism === 'idempotency' &&
          event.key.includes(key) &&
          (event.outcome === 'executed' || event.outcome === 'replayed'),
      );
      if (seen.length >= count) resolve(seen);
      else setTimeout(check, 10);
    };
    check();
  });
}

/** Resolves with the first event `matches` accepts, once one arrives. */
function eventWhere(events: OncelyEvent[], matches: (event: OncelyEvent) => boolean) {
  return new Promise<OncelyEvent>((resolve) => {
    const check = () => {
      const found = events.find(matches);
      if (found) resolve(found);
      else setTimeout(check, 10);
    };
    check();
  });
}

describe('message handlers over NATS (Redis + PostgreSQL, two consumers in one queue group)', () => {
  const backends = new SharedBackends();
  const consumers: INestMicroservice[] = [];
  let client: ClientProxy;

  beforeAll(async () => {
    await requireBroker();
    await backends.start();
    for (let i = 0; i < 2; i++) {
      const { options, source } = await backends.node();
      const module = await Test.createTestingModule({
        imports: [OncelyModule.forRoot(options)],
        controllers: [PaymentsConsumer],
        providers: [
          Executions,
          Gates,
          { provide: SOURCE, useValue: source },
          { provide: SCHEMA, useValue: backends.schema.name },
        ],
      }).compile();
      const consumer = module.createNestMicroservice({
        transport: Transport.NATS,
        options: { servers: [nats.url], queue: `oncely-${run}` },
        logger: false,
      });
      await consumer.listen();
      consumers.push(consumer);
    }
    client = ClientProxyFactory.create({
      transport: Transport.NATS,
      options: { servers: [nats.url] },
    });
    await client.connect();
  });

  afterAll(async () => {
    await client?.close();
    await Promise.allSettled(consumers.map((consumer) => consumer.close()));
    await backends.stop();
  });

  const executions = (name: string) =>
    consumers.reduce((sum, consumer) => sum + consumer.get(Executions).of(name), 0);
  const openGate = (name: string) => consumers.forEach((c) => c.get(Gates).open(name));
  const entered = (name: string) =>
    Promise.race(consumers.map((consumer) => consumer.get(Gates).entered$(name)));
  const send = (message: ChargeMessage) => lastValueFrom(client.send(CHARGE, message));

  it('runs concurrent duplicate requests once and answers every one with the same reply', async () => {
    const message = { messageId: 'pay-1', amount: 120 };
    const replies = Array.from({ length: 5 }, () => send(message));
    await entered('pay-1');
    openGate('pay-1');
    const expected = { chargeId: 'ch-pay-1', amount: 120, execution: 1 };
    expect(await Promise.all(replies)).toEqual(Array.from({ length: 5 }, () => expected));
    expect(executions('charge:pay-1')).toBe(1);
    expect(await backends.effectRows('pay-1')).toBe(1);
    expect(await backends.recordRows(`message:consume:v1:${CHARGE}:pay-1`)).toBe(1);
  });

  it('replays a redelivered request with the stored reply', async () => {
    openGate('pay-2');
    const first = await send({ messageId: 'pay-2', amount: 9 });
    const again = await Promise.all([1, 2, 3].map(() => send({ messageId: 'pay-2', amount: 9 })));
    expect(again).toEqual([first, first, first]);
    expect(executions('charge:pay-2')).toBe(1);
    expect(await backends.effectRows('pay-2')).toBe(1);
  });

  it('answers a reused message id with another payload with ONCELY_PAYLOAD_MISMATCH', async () => {
    openGate('pay-3');
    await send({ messageId: 'pay-3', amount: 10 });
    await expect(send({ messageId: 'pay-3', amount: 11 })).rejects.toMatchObject({
      code: OncelyCallErrorCode.payloadMismatch,
      status: 422,
    });
    expect(executions('charge:pay-3')).toBe(1);
    expect(await backends.effectRows('pay-3')).toBe(1);
  });

  it('applies the same event published 5 times once', async () => {
    const event = { messageId: 'ship-1', amount: 1 };
    await Promise.all(Array.from({ length: 5 }, () => lastValueFrom(client.emit(SHIPPED, event))));
    const seen = await decisions(backends.events, `${SHIPPED}:ship-1`, 5);
    expect(seen.filter((e) => e.outcome === 'executed')).toHaveLength(1);
    expect(seen.filter((e) => e.outcome === 'replayed')).toHaveLength(4);
    expect(executions('shipped:ship-1')).toBe(1);
    expect(await backends.effectRows('ship-1')).toBe(1);
  });

  it('reports every event it refuses: a reused id with another payload, a missing id', async () => {
    await lastValueFrom(client.emit(SHIPPED, { messageId: 'ship-7', amount: 7 }));
    await decisions(backends.events, `${SHIPPED}:ship-7`, 1);
    await lastValueFrom(client.emit(SHIPPED, { messageId: 'ship-7', amount: 8 }));
    await lastValueFrom(client.emit(SHIPPED, { amount: 9 }));
    const mismatch = await eventWhere(
      backends.events,
      (e) => e.outcome === 'mismatch' && e.key.includes(`${SHIPPED}:ship-7`),
    );
    expect(mismatch.operation).toBe('message:consume:v1');
    const refused = await eventWhere(backends.events, (e) => e.outcome === 'refused');
    expect(refused).toMatchObject({
      mechanism: 'idempotency',
      operation: 'message:consume:v1',
      key: 'message:consume:v1',
    });
    expect(refused.error).toBeInstanceOf(MissingKeyFieldError);
    expect(executions('shipped:ship-7')).toBe(1);
    expect(await backends.effectRows('ship-7')).toBe(1);
  });

  it('keys an event by a transport header', async () => {
    const publish = (id: string) => {
      const headers = natsHeaders();
      headers.set('Message-Id', id);
      return lastValueFrom(
        client.emit(TRACKED, new NatsRecordBuilder({ amount: 2 }).setHeaders(headers).build()),
      );
    };
    await Promise.all([publish('trk-1'), publish('trk-1'), publish('trk-1'), publish('trk-2')]);
    await decisions(backends.events, `${TRACKED}:trk-1`, 3);
    await decisions(backends.events, `${TRACKED}:trk-2`, 1);
    expect(executions('tracked:trk-1')).toBe(1);
    expect(executions('tracked:trk-2')).toBe(1);
    expect(await backends.effectRows('trk-1')).toBe(1);
    expect(await backends.effectRows('trk-2')).toBe(1);
  });
});
