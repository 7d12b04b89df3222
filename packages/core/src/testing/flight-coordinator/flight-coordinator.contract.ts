import { contractCases, type ContractCase } from '../contract-case.js';
import type { FlightCoordinatorFixtureFactory } from './flight-coordinator.fixture.js';
import { leaseCases } from './lease.cases.js';
import { noticeCases } from './notice.cases.js';
import { outcomeCases } from './outcome.cases.js';

/** One case of `flightCoordinatorContract`. */
export type FlightCoordinatorContractCase = ContractCase;

/**
 * The behaviour every `FlightCoordinator` must show, as runner-agnostic cases (see
 * `registerContractCases`): leases and fences, stored outcomes, notices. Each case builds its
 * own fixture from `factory`, uses fresh random keys, and never asserts on durations.
 */
export function flightCoordinatorContract(
  factory: FlightCoordinatorFixtureFactory,
): FlightCoordinatorContractCase[] {
  return contractCases(factory, { ...leaseCases, ...outcomeCases, ...noticeCases });
}
