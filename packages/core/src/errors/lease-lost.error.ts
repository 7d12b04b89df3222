import { OncelyError } from './oncely-error.js';

/**
 * The lease on an idempotency record (or a flight) was lost before the work was confirmed:
 * it expired and another caller took over, or it was deleted. The work must not be confirmed.
 */
export class LeaseLostError extends OncelyError {
  readonly code = 'lease_lost';

  constructor(
    /** The record identity (or flight key) whose lease was lost. */
    readonly identity: string,
    /** Fencing token of the lost lease: writes fenced with it must be refused downstream. */
    readonly fence: number,
    options?: ErrorOptions,
  ) {
    super(
      `The lease on "${identity}" (fence ${fence}) was lost before the work completed; another execution now owns it. Raise leaseTtl above the handler's longest run, or keep the watchdog renewing it.`,
      options,
    );
  }
}
