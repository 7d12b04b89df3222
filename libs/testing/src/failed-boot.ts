/**
 * A boot that fails in a child process, which must then end by itself: nothing left open may keep
 * it alive. The child reports its failure with `reportFailedBoot`; the test waits for its exit
 * with `exitAfterFailedBoot`.
 */
import { reportToParent, type Worker } from './spawn-workers.js';

/** How long after reporting its failure a child lists what still keeps it alive. */
const LIST_RESOURCES_AFTER_MS = 2_000;

/**
 * Called in the child's main instead of `process.exit`: reports the error's name, sets exit code
 * 1, and, if the process is still alive two seconds later, prints what keeps it so
 * (`process.getActiveResourcesInfo()`) for the test's failure message.
 */
export function reportFailedBoot(error: unknown): void {
  reportToParent({ failed: (error as Error).name });
  process.exitCode = 1;
  // Unref'd: it must not be what keeps the process alive.
  setTimeout(
    () => console.log(`still running on: ${process.getActiveResourcesInfo().join(', ')}`),
    LIST_RESOURCES_AFTER_MS,
  ).unref();
}

/** What a failed boot reported, and how the process exited. */
export interface FailedBootExit {
  /** The error's name, as `reportFailedBoot` reported it. */
  readonly failed: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * Waits for `worker` to report its failed boot, then gives it `graceMs` to end by itself; one that
 * does not is killed, and this rejects with its output (where it listed what kept it alive).
 */
export async function exitAfterFailedBoot(
  worker: Worker,
  graceMs = 5_000,
): Promise<FailedBootExit> {
  const { failed } = await worker.message<{ failed?: string }>((message) => 'failed' in message);
  let timer: NodeJS.Timeout | undefined;
  const exit = await Promise.race([
    worker.exited,
    new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), graceMs))),
  ]);
  clearTimeout(timer);
  if (exit === undefined) {
    worker.kill();
    await worker.exited;
    throw new Error(
      `The process was still running ${graceMs} ms after its failed boot (${failed}):\n${worker.output()}`,
    );
  }
  return { failed: failed ?? '', code: exit.code, signal: exit.signal };
}
