import { answerWithin } from '../time/answer-within.js';
import type { BackendReport } from './backend-report.port.js';
import type { OncelyLogger } from './oncely-logger.js';

/** One adapter of the engine and what the start-up line calls it. */
export interface StartupBackend {
  /** E.g. `flight coordinator`, `record store`. */
  readonly role: string;
  readonly adapter: BackendReport & object;
}

/**
 * The start-up's line per adapter: what it works on (`BackendReport.describe`), logged once its
 * backend answered; or, when it does not answer within `timeoutMs` (`BackendReport.probe`), one
 * warning naming it and why. The adapters are probed together, so a boot waits `timeoutMs` at
 * most however many of them are down. Returns the adapters found unreachable.
 */
export async function checkBackends(
  backends: readonly StartupBackend[],
  logger: OncelyLogger,
  timeoutMs: number,
): Promise<ReadonlySet<object>> {
  const failures = await Promise.all(
    backends.map(({ adapter }) => probeFailure(adapter, timeoutMs)),
  );
  const unreachable = new Set<object>();
  backends.forEach(({ role, adapter }, index) => {
    const line = `oncely: ${role} ${descriptionOf(adapter)}`;
    const failure = failures[index];
    if (failure === undefined) {
      logger.log(line);
      return;
    }
    unreachable.add(adapter);
    logger.warn(
      `${line} is unreachable (${failure}). The app boots anyway: until it answers, its routes answer as in any outage (onCoordinatorDown, 503 problems), and the claims kept there are registered once it does.`,
    );
  });
  return unreachable;
}

/** Why the backend did not answer, or `undefined` when it did (or cannot be asked). */
async function probeFailure(
  adapter: BackendReport,
  timeoutMs: number,
): Promise<string | undefined> {
  if (typeof adapter.probe !== 'function') return undefined;
  try {
    // Bounded here too: the boot's promise must not rest on every adapter keeping its own.
    const answer = await answerWithin(adapter.probe(timeoutMs), timeoutMs);
    return answer.answered ? undefined : `no answer within ${timeoutMs} ms`;
  } catch (error) {
    // Read rather than `instanceof Error`: a socket's error may come from another realm.
    const message = (error as { message?: unknown } | null)?.message;
    return typeof message === 'string' ? message : String(error);
  }
}

function descriptionOf(adapter: BackendReport & object): string {
  if (typeof adapter.describe === 'function') return adapter.describe();
  return adapter.constructor.name;
}
