import { rabbitmqUrl, requireService } from '@oncely/testing-kit';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { randomUUID } from 'node:crypto';

/**
 * A plain amqplib channel on the test RabbitMQ, apart from the consumers under test: it names
 * the queues of this run (deleted at the end), publishes and counts what is left in them.
 */
export class RabbitmqAdmin {
  private readonly run = randomUUID().slice(0, 8);
  private readonly queues: string[] = [];
  private connection?: ChannelModel;
  private admin?: Channel;

  /** Fails (never skips) when RabbitMQ is down. Call it in `beforeAll`. */
  async start(): Promise<void> {
    await requireService('rabbitmq');
    this.connection = await amqp.connect(rabbitmqUrl());
    this.admin = await this.connection.createChannel();
  }

  get channel(): Channel {
    if (!this.admin) throw new Error('RabbitmqAdmin.start() was not awaited.');
    return this.admin;
  }

  /** A queue name of this run only, deleted by `stop()`. */
  queue(name: string): string {
    const queue = `oncely-${this.run}.${name}`;
    this.queues.push(queue);
    return queue;
  }

  /** Ready messages in `queue`: with no consumer left, every message nobody settled. */
  async messages(queue: string): Promise<number> {
    return (await this.channel.checkQueue(queue)).messageCount;
  }

  async stop(): Promise<void> {
    for (const queue of this.queues) await this.admin?.deleteQueue(queue);
    await this.connection?.close();
  }
}
