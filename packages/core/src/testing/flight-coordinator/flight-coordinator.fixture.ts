import type { FlightCoordinator } from '../../flight/flight-coordinator.port.js';
import type { ContractCaseBodies, ContractFixture } from '../contract-case.js';

/** One coordinator under test, with control over the time its TTLs see. */
export interface FlightCoordinatorFixture extends ContractFixture {
  readonly coordinator: FlightCoordinator;
}

export type FlightCoordinatorFixtureFactory = () =>
  FlightCoordinatorFixture | Promise<FlightCoordinatorFixture>;

export type FlightCases = ContractCaseBodies<FlightCoordinatorFixture>;
