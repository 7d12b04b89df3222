import { OncelyError } from './oncely-error.js';

/**
 * How a lease was lost: it `expired` (it ran out unrenewed, and another caller may have taken
 * over), or it was `released` before it ran out, which only an operator does (`oncely release`,
 * `OncelyAdmin.forceRelease`), unless the store lost it.
 */
export type LeaseLossReason = 'expired' | 'released';

/**
 * The lease on an idempotency record (or a flight) was lost before the work was confirmed:
 * it expired and another caller took over, or it was released or deleted. The work must not be
 * confirmed.
 */
export class LeaseLostError extends OncelyError {
  readonly code = 'lease_lost';
  /** How it was lost; `expired` unless the holder knows its lease had time left. */
  readonly reason: LeaseLossReason;

  constructor(
    /** The record identity (or flight key) whose lease was lost. */
    readonly identity: string,
    /** Fencing token of the lost lease: writes fenced with it must be refused downstream. */
    readonly fence: number,
    options?: ErrorOptions & { readonly reason?: LeaseLossReason },
  ) {
    const reason = options?.reason ?? 'expired';
    super(
      reason === 'released'
        ? `The lease on "${identity}" (fence ${fence}) was released before it expired, by an operator (oncely release, OncelyAdmin.forceRelease) or by the store losing it: nothing of this run was kept, and the next request with this key runs again.`
        : `The lease on "${identity}" (fence ${fence}) was lost before the work completed; another execution now owns it. Raise leaseTtl above the handler's longest run, or keep the watchdog renewing it.`,
      options,
    );
    this.reason = reason;
  }
}
