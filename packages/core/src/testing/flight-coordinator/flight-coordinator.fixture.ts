import type { FlightCoordinator } from '../../flight/flight-coordinator.port.js';
import type { ContractCaseBodies, ContractFixture } from '../contract-case.js';

/** One coordinator under test, with control over the time its TTLs see. */
export interface FlightCoordinatorFixture extends ContractFixture {
  /** The coordinator under test, fresh for the case (no key state from other cases). */
  readonly coordinator: FlightCoordinator;
}

/** Builds one fixture per case; `flightCoordinatorContract` calls it before each case. */
export type FlightCoordinatorFixtureFactory = () =>
  FlightCoordinatorFixture | Promise<FlightCoordinatorFixture>;

export type FlightCases = ContractCaseBodies<FlightCoordinatorFixture>;
