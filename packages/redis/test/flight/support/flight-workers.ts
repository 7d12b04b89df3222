import { spawnWorker, type Worker } from '@oncely/testing-kit';
import type { FlightWorkerConfig, RunMessage, WorkerReport } from '../fixtures/flight.worker.js';

const workerFile = 'packages/redis/test/flight/fixtures/flight.worker.ts';

export interface FlightWorker {
  readonly worker: Worker;
  run(message: RunMessage): void;
  /** The worker's next report of `type` after the ones already consumed. */
  report<T extends WorkerReport['type']>(type: T): Promise<Extract<WorkerReport, { type: T }>>;
  /** How its current flight ended. */
  outcome(): Promise<Extract<WorkerReport, { type: 'done' | 'failed' }>>;
}

/** Starts a flight worker process and waits until it is connected. */
export async function startFlightWorker(config: FlightWorkerConfig): Promise<FlightWorker> {
  const worker = spawnWorker(workerFile, { args: [JSON.stringify(config)] });
  const flightWorker: FlightWorker = {
    worker,
    run: (message) => worker.send(message),
    report: (type) =>
      worker.message<WorkerReport>((m) => m.type === type, 60_000) as Promise<never>,
    outcome: () =>
      worker.message<WorkerReport>(
        (m) => m.type === 'done' || m.type === 'failed',
        60_000,
      ) as Promise<never>,
  };
  await flightWorker.report('ready');
  return flightWorker;
}
