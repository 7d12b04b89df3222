import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { MissingKeyFieldError, type OncelyEvent, type OncelyOutcome } from '@oncely/core';
import { randomUUID } from 'node:crypto';
import { lastValueFrom } from 'rxjs';
import { nats, requireBroker } from '../support/require-broker.js';
import { startCookbookApp, type CookbookApp } from './support/cookbook-app.js';
import { PointsConsumer, PointsLedger, type PointsEvent } from './points.consumer.js';

const ORDERS = 'orders.completed';
const REVIEWS = 'reviews.published';

describe('cookbook: message consumption (topic and message id, over NATS)', () => {
  let shop: CookbookApp;
  let ledger: PointsLedger;
  let client: ClientProxy;

  beforeAll(async () => {
    await requireBroker();
    shop = await startCookbookApp({
      controllers: [PointsConsumer],
      providers: [PointsLedger],
      beforeInit: async (app) => {
        // A hybrid app: HTTP and a NATS consumer, the consumer under the app's interceptors.
        app.connectMicroservice(
          { transport: Transport.NATS, options: { servers: [nats.url] } },
          { inheritAppConfig: true },
        );
        await app.startAllMicroservices();
      },
    });
    ledger = shop.get(PointsLedger);
    client = ClientProxyFactory.create({
      transport: Transport.NATS,
      options: { servers: [nats.url] },
    });
    await client.connect();
  });

  afterAll(async () => {
    await client?.close();
    await shop?.close();
  });

  /** Ids of this run only: another run on the same broker never counts here. */
  const event = (changes: Partial<PointsEvent> = {}): PointsEvent => ({
    messageId: `msg-${randomUUID()}`,
    customerId: `cust-${randomUUID()}`,
    points: 10,
    ...changes,
  });
  const publish = (topic: string, message: object) => lastValueFrom(client.emit(topic, message));
  const entries = (customerId: string) =>
    ledger.entries.filter((entry) => entry.customerId === customerId);

  /** Resolves once oncely decided `count` deliveries of `messageId` with one of `outcomes`. */
  const decided = (messageId: string, count: number, outcomes: OncelyOutcome[]) =>
    new Promise<OncelyEvent[]>((resolve) => {
      const check = () => {
        const seen = shop.events.filter(
          (e) => e.key.includes(`:${messageId}`) && outcomes.includes(e.outcome),
        );
        if (seen.length >= count) resolve(seen);
        else setTimeout(check, 10);
      };
      check();
    });

  it('applies an event delivered five times once', async () => {
    const message = event();
    await Promise.all([1, 2, 3, 4, 5].map(() => publish(ORDERS, message)));
    const seen = await decided(message.messageId, 5, ['executed', 'replayed']);
    expect(seen.filter((e) => e.outcome === 'executed')).toHaveLength(1);
    expect(seen.filter((e) => e.outcome === 'replayed')).toHaveLength(4);
    expect(seen[0]!.key).toBe(`shop:message-consume:v1:${ORDERS}:${message.messageId}`);
    expect(entries(message.customerId)).toHaveLength(1);
  });

  it('refuses a message id reused with another payload, and reports it', async () => {
    const message = event();
    await publish(ORDERS, message);
    await decided(message.messageId, 1, ['executed']);
    await publish(ORDERS, { ...message, points: 500 });
    await decided(message.messageId, 1, ['mismatch']);
    expect(entries(message.customerId).map((entry) => entry.points)).toEqual([10]);
  });

  it('keeps nothing of a failed delivery: the redelivery applies it', async () => {
    const message = event();
    ledger.down = true;
    await publish(ORDERS, message);
    await decided(message.messageId, 1, ['failed']);
    ledger.down = false;
    await publish(ORDERS, message);
    await decided(message.messageId, 1, ['executed']);
    expect(entries(message.customerId)).toHaveLength(1);
  });

  it('refuses an event without a message id, applying nothing', async () => {
    const customerId = `cust-${randomUUID()}`;
    const before = shop.events.length;
    await publish(ORDERS, { customerId, points: 10 });
    const refused = await new Promise<OncelyEvent>((resolve) => {
      const check = () => {
        const found = shop.events.slice(before).find((e) => e.outcome === 'refused');
        if (found) resolve(found);
        else setTimeout(check, 10);
      };
      check();
    });
    expect(refused.error).toBeInstanceOf(MissingKeyFieldError);
    expect(entries(customerId)).toHaveLength(0);
  });

  describe('reverse tests: alike, yet different messages', () => {
    it('applies the same message id on another topic', async () => {
      const message = event();
      await publish(ORDERS, message);
      await publish(REVIEWS, message);
      await decided(message.messageId, 2, ['executed']);
      expect(
        entries(message.customerId)
          .map((entry) => entry.reason)
          .sort(),
      ).toEqual(['order', 'review']);
    });

    it('applies two messages with the same content and their own ids', async () => {
      const first = event();
      const second = { ...first, messageId: `msg-${randomUUID()}` };
      await publish(ORDERS, first);
      await publish(ORDERS, second);
      await decided(first.messageId, 1, ['executed']);
      await decided(second.messageId, 1, ['executed']);
      expect(entries(first.customerId)).toHaveLength(2);
    });
  });
});
