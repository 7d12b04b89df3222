import type {
  AcquireOutcome,
  FlightCoordinator,
  FlightOutcome,
  HeldOutcome,
} from '../flight/flight-coordinator.port.js';
import { SealedDataError } from './sealed-data.error.js';
import { EncryptionKeyring, type EncryptionOptions } from './encryption-keyring.js';

const PREFIX = 'oe1:';

/**
 * Encryption at rest for any `FlightCoordinator`: cached results and shared errors are sealed
 * with AES-256-GCM (bound to their key and kind) before the coordinator stores them, and opened
 * when `acquire` returns them. Leases, fences and notices are untouched. A cached payload that
 * does not open fails `acquire` with `SealedDataError`; it is never handed to a caller.
 */
export class EncryptedFlightCoordinator implements FlightCoordinator {
  readonly #keyring: EncryptionKeyring;

  constructor(
    private readonly coordinator: FlightCoordinator,
    options: EncryptionOptions,
  ) {
    this.#keyring = new EncryptionKeyring('EncryptedFlightCoordinator', options);
  }

  async acquire(key: string, owner: string, leaseTtlMs: number): Promise<AcquireOutcome> {
    const outcome = await this.coordinator.acquire(key, owner, leaseTtlMs);
    if (outcome.kind === 'cached')
      return { kind: 'cached', payload: this.#open(key, 'result', outcome.payload) };
    if (outcome.kind === 'failed')
      return { kind: 'failed', payload: this.#open(key, 'error', outcome.payload) };
    return outcome;
  }

  /**
   * Opens what the inner coordinator holds; one that does not open is left to `acquire`, which
   * reports it (`SealedDataError`).
   */
  peek(key: string): HeldOutcome | undefined {
    const held = this.coordinator.peek?.(key);
    if (held === undefined) return undefined;
    try {
      return {
        kind: held.kind,
        payload: this.#open(key, held.kind === 'cached' ? 'result' : 'error', held.payload),
      };
    } catch (error) {
      if (error instanceof SealedDataError) return undefined;
      throw error;
    }
  }

  renew(key: string, owner: string, leaseTtlMs: number): Promise<boolean> {
    return this.coordinator.renew(key, owner, leaseTtlMs);
  }

  complete(key: string, owner: string, outcome: FlightOutcome): Promise<boolean> {
    const sealed = this.#keyring.seal(
      Buffer.from(outcome.payload, 'utf8'),
      contextOf(key, outcome.kind),
    );
    return this.coordinator.complete(key, owner, {
      ...outcome,
      payload: PREFIX + sealed.toString('base64'),
    });
  }

  release(key: string, owner: string): Promise<boolean> {
    return this.coordinator.release(key, owner);
  }

  waitForNotice(key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.coordinator.waitForNotice(key, timeoutMs, signal);
  }

  close(): Promise<void> {
    return this.coordinator.close();
  }

  #open(key: string, kind: FlightOutcome['kind'], payload: string): string {
    // Without the prefix the bytes are not sealed; `open` refuses them as `not_sealed`.
    const bytes = payload.startsWith(PREFIX)
      ? Buffer.from(payload.slice(PREFIX.length), 'base64')
      : Buffer.from(payload, 'utf8');
    return this.#keyring.open(bytes, contextOf(key, kind)).toString('utf8');
  }
}

function contextOf(key: string, kind: FlightOutcome['kind']): string {
  return `oncely:flight:v1:${key}:${kind}`;
}
