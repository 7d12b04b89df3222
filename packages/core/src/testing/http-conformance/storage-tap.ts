import type { FlightCoordinator, FlightOutcome } from '../../flight/flight-coordinator.port.js';
import type {
  IdempotencyRecordStore,
  RecordLease,
} from '../../record/idempotency-record-store.port.js';
import type { StoredResponse } from '../../record/stored-response.js';

/**
 * Sees what oncely writes to a record store and a flight coordinator without changing how they
 * behave: each call goes to the real adapter (same object, same methods and flags); only what a
 * confirmed `complete` wrote is noted. Gives a harness the `storage-inspection` capability on
 * any backend.
 */
export class StorageTap {
  private readonly written: string[] = [];
  private completedRecords = 0;

  /** The store, seen through the tap. */
  recordStore<T extends IdempotencyRecordStore>(store: T): T {
    return this.tap(store, 'complete', async (complete, ...args) => {
      const [lease, response] = args as [RecordLease, StoredResponse];
      await complete(lease, response);
      this.completedRecords += 1;
      this.written.push(describe(response));
    });
  }

  /** The coordinator, seen through the tap. */
  flightCoordinator<T extends FlightCoordinator>(coordinator: T): T {
    return this.tap(coordinator, 'complete', async (complete, ...args) => {
      const [key, owner, outcome] = args as [string, string, FlightOutcome];
      const confirmed = (await complete(key, owner, outcome)) as boolean;
      if (confirmed) this.written.push(outcome.payload);
      return confirmed;
    });
  }

  /** Responses kept so far: confirmed record completions. */
  records(): number {
    return this.completedRecords;
  }

  /** Everything confirmed written so far, records and flight results, as text. */
  storedText(): string {
    return this.written.join('\n');
  }

  private tap<T extends object>(
    target: T,
    method: string,
    replacement: (
      original: (...args: unknown[]) => Promise<unknown>,
      ...args: unknown[]
    ) => Promise<unknown>,
  ): T {
    return new Proxy(target, {
      get(object, property) {
        const value: unknown = Reflect.get(object, property, object);
        if (typeof value !== 'function') return value;
        const bound = (value as (...args: unknown[]) => unknown).bind(object);
        if (property !== method) return bound;
        return (...args: unknown[]) =>
          replacement(bound as (...args: unknown[]) => Promise<unknown>, ...args);
      },
    });
  }
}

function describe(response: StoredResponse): string {
  const { body } = response;
  const text =
    body.kind === 'json'
      ? JSON.stringify(body.value)
      : body.kind === 'bytes'
        ? Buffer.from(body.value).toString('utf8')
        : '';
  return `${response.status} ${JSON.stringify(response.headers)} ${text}`;
}
