export {
  flightCoordinatorContract,
  type FlightCoordinatorContractCase,
} from './flight-coordinator.contract.js';
export type {
  FlightCoordinatorFixture,
  FlightCoordinatorFixtureFactory,
} from './flight-coordinator.fixture.js';
