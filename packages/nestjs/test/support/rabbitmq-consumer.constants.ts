/** The event the consumer process handles. */
export const PAID = 'orders.paid';

/** The payload of a `PAID` event; `freeze` marks the message its consumer stops dead on. */
export interface PaidMessage {
  readonly messageId: string;
  readonly amount: number;
  readonly freeze?: boolean;
}

/**
 * Where a consumer process stops dead on a message flagged `freeze: true`, its thread blocked
 * until the parent SIGKILLs it: `after-complete` once its record is complete (before the ack),
 * `after-effect` once the handler's effect is written (before the record is complete), `never`
 * for a healthy consumer. A redelivery of the flagged message stops a second `after-effect`
 * consumer too (it runs again), never a second `after-complete` one (it replays).
 */
export type FreezePoint = 'after-complete' | 'after-effect' | 'never';
