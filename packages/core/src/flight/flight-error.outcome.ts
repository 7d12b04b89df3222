import type { OncelyOutcome } from '../events/oncely-event.js';
import { ForeignOwnerError } from '../errors/foreign-owner.error.js';
import { LeaseLostError } from '../errors/lease-lost.error.js';
import { FlightBusyError } from './flight-busy.error.js';
import { CoordinatorUnavailableError } from './flight-coordinator.port.js';

/** The outcome a SingleFlight run that threw `error` reports for its caller. */
export function flightErrorOutcome(error: unknown): OncelyOutcome {
  if (error instanceof FlightBusyError) return 'conflict';
  if (error instanceof LeaseLostError) return 'lease_lost';
  if (error instanceof ForeignOwnerError) return 'foreign_owner';
  if (error instanceof CoordinatorUnavailableError) return 'coordinator_down';
  return 'failed';
}
