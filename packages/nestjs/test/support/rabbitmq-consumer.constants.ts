/** The event the consumer process handles. */
export const PAID = 'orders.paid';

/**
 * Where a consumer process stops dead, its thread blocked until the parent SIGKILLs it:
 * `after-complete` once its record is complete (before the ack), `after-effect` once the
 * handler's effect is written (before the record is complete), `never` for a healthy consumer.
 */
export type FreezePoint = 'after-complete' | 'after-effect' | 'never';
