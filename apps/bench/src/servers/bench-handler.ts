/**
 * The one handler every contender serves (ours, the bare route and the peer), so that the only
 * difference between two contenders is what sits in front of it.
 */
let accepted = 0;

export interface AcceptedOrder {
  readonly orderId: number;
  readonly customer: unknown;
  readonly amount: unknown;
  readonly status: 'accepted';
}

export function acceptOrder(body: unknown): AcceptedOrder {
  const input = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  accepted += 1;
  return { orderId: accepted, customer: input.customer, amount: input.amount, status: 'accepted' };
}

/** Wall-clock milliseconds with sub-millisecond precision, comparable across local processes. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Tells the bench which port the server listens on: one JSON line on stdout. */
export function announceListening(port: number): void {
  process.stdout.write(`${JSON.stringify({ listening: port })}\n`);
}
