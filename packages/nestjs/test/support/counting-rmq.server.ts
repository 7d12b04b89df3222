import { ServerRMQ } from '@nestjs/microservices';

/** One ack, nack or reject a consumer sent to RabbitMQ. */
export interface Settlement {
  readonly action: 'ack' | 'nack' | 'reject';
  /** Whether the message goes back to the queue (`nack`, `reject`); `false` for an ack. */
  readonly requeue: boolean;
  /** The message's payload (`data` of Nest's packet). */
  readonly data: unknown;
  /** Whether RabbitMQ had delivered this message before. */
  readonly redelivered: boolean;
}

interface DeliveredMessage {
  readonly content: Buffer;
  readonly fields: { readonly redelivered: boolean };
}

interface SettlingChannel {
  ack(message: DeliveredMessage, allUpTo?: boolean): void;
  nack(message: DeliveredMessage, allUpTo?: boolean, requeue?: boolean): void;
  reject(message: DeliveredMessage, requeue?: boolean): void;
}

/**
 * Nest's RabbitMQ server, recording every settlement sent on its channel before passing it on
 * unchanged: the counts the suites assert, whoever settles (oncely or the handler).
 */
export class CountingServerRMQ extends ServerRMQ {
  readonly settlements: Settlement[] = [];
  /** Hears each settlement as it is sent (a child process reports it to its parent). */
  onSettlement?: (settlement: Settlement) => void;
  private readonly observed = new WeakSet<object>();

  override async handleMessage(message: Record<string, unknown>, channel: unknown): Promise<void> {
    if (typeof channel === 'object' && channel !== null && !this.observed.has(channel)) {
      this.observed.add(channel);
      this.observe(channel as SettlingChannel);
    }
    return super.handleMessage(message, channel);
  }

  count(action: Settlement['action'], requeue?: boolean): number {
    return this.settlements.filter(
      (s) => s.action === action && (requeue === undefined || s.requeue === requeue),
    ).length;
  }

  private observe(channel: SettlingChannel): void {
    const { ack, nack, reject } = channel;
    const record = (action: Settlement['action'], message: DeliveredMessage, requeue: boolean) => {
      const packet = JSON.parse(message.content.toString()) as { data?: unknown };
      const { redelivered } = message.fields;
      const settlement = { action, requeue, data: packet.data, redelivered };
      this.settlements.push(settlement);
      this.onSettlement?.(settlement);
    };
    // amqplib requeues by default on nack and reject.
    channel.ack = (message, allUpTo) => {
      record('ack', message, false);
      ack.call(channel, message, allUpTo);
    };
    channel.nack = (message, allUpTo, requeue = true) => {
      record('nack', message, requeue);
      nack.call(channel, message, allUpTo, requeue);
    };
    channel.reject = (message, requeue = true) => {
      record('reject', message, requeue);
      reject.call(channel, message, requeue);
    };
  }
}
