/** A named check that throws (`node:assert`) on failure; independent of any test runner. */
export interface ContractCase {
  /** What the case checks, as a sentence; unique within its suite. */
  readonly name: string;
  /** Builds a fixture, runs the check against it and cleans the fixture up. */
  readonly run: () => Promise<void>;
}

/** What every contract fixture offers besides the port under test. */
export interface ContractFixture {
  /**
   * Lets `ms` milliseconds pass for the port's TTLs: move a manual clock, or really sleep when
   * the backend keeps its own time (e.g. Redis key TTLs; the cases keep TTLs short).
   */
  advance(ms: number): Promise<void>;
  /** Closes what the factory opened; called once per case, also when the case fails. */
  cleanup(): Promise<void>;
}

/** Case bodies by name, each run against a fixture of its own. */
export type ContractCaseBodies<F> = Record<string, (fixture: F) => Promise<void>>;

/**
 * Registers contract cases (any `{ name, run }` cases) with any runner's `it`/`test`:
 *
 * ```ts
 * describe('MyFlightCoordinator', () => {
 *   registerContractCases(flightCoordinatorContract(factory), it);
 * });
 * ```
 *
 * which is `for (const c of cases) it(c.name, c.run)`.
 */
export function registerContractCases(
  cases: readonly ContractCase[],
  test: (name: string, run: () => Promise<void>) => unknown,
): void {
  for (const contractCase of cases) test(contractCase.name, contractCase.run);
}

/** Runner-agnostic cases from `bodies`: each builds its fixture with `factory` and cleans it up. */
export function contractCases<F extends ContractFixture>(
  factory: () => F | Promise<F>,
  bodies: ContractCaseBodies<F>,
): ContractCase[] {
  return Object.entries(bodies).map(([name, body]) => ({
    name,
    run: async () => {
      const fixture = await factory();
      try {
        await body(fixture);
      } finally {
        await fixture.cleanup();
      }
    },
  }));
}
