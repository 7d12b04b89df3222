import { Controller, Injectable } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { IdempotentKey } from '@oncely/nestjs';

/** What the producers publish; `messageId` is set once by the producer, kept on redelivery. */
export interface PointsEvent {
  readonly messageId: string;
  readonly customerId: string;
  readonly points: number;
}

/**
 * Stands in for the points ledger. In a database, its entries are also unique on
 * `(topic, message_id)`; these are not, so that the tests see what the key alone prevents.
 */
@Injectable()
export class PointsLedger {
  readonly entries: Array<PointsEvent & { readonly reason: string }> = [];
  down = false;

  award(event: PointsEvent, reason: string): void {
    if (this.down) throw new Error('The points database is unavailable; redeliver the message.');
    this.entries.push({ ...event, reason });
  }
}

/**
 * The consumption log: `shop:message-consume:v1:{topic}:{messageId}`. One operation for every
 * topic (`shared`), the topic in the scope keeping each topic's ids apart.
 */
const consumeOnce = {
  operation: 'message-consume',
  shared: true,
  scope: 'params.topic',
  target: 'body.messageId',
  idempotencyKey: 'ignored',
  // A redelivery arriving while the first delivery runs waits for its outcome.
  onBusy: 'wait',
  // Longer than the broker keeps and redelivers a message (or a replay of the stream).
  retention: 7 * 24 * 60 * 60 * 1000,
} as const;

@Controller()
export class PointsConsumer {
  constructor(private readonly ledger: PointsLedger) {}

  @EventPattern('orders.completed')
  @IdempotentKey(consumeOnce)
  onOrderCompleted(@Payload() event: PointsEvent): void {
    this.ledger.award(event, 'order');
  }

  @EventPattern('reviews.published')
  @IdempotentKey(consumeOnce)
  onReviewPublished(@Payload() event: PointsEvent): void {
    this.ledger.award(event, 'review');
  }
}
