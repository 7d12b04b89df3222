import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';
import type { FlightCoordinator } from '../flight/flight-coordinator.port.js';
import type { IdempotencyRecordStore } from '../record/idempotency-record-store.port.js';
import { EncryptedFlightCoordinator } from '../security/encrypted-flight.coordinator.js';
import {
  EncryptedIdempotencyRecordStore,
  type EncryptedRecordStoreOptions,
} from '../security/encrypted-idempotency-record.store.js';
import {
  QuotaLimitedIdempotencyRecordStore,
  type RecordQuotaOptions,
} from '../security/quota-limited-idempotency-record.store.js';

/** The security options every integration (Nest module, `createOncely()`) takes. */
export interface SecurityOptions {
  /** Encrypt stored responses and cached results at rest (AES-256-GCM, rotatable keys). */
  readonly encryption?: EncryptedRecordStoreOptions;
  /** Cap new idempotency records per tenant/user and window (429 beyond it). */
  readonly recordQuota?: RecordQuotaOptions;
}

/**
 * The coordinator and store with the security options applied: the quota outside (refusals
 * never reach the store), encryption inside (the backend only ever sees sealed data).
 */
export function secureEngines(
  owner: string,
  engines: { readonly coordinator: FlightCoordinator; readonly store: IdempotencyRecordStore },
  options: SecurityOptions,
): { coordinator: FlightCoordinator; store: IdempotencyRecordStore } {
  let { coordinator, store } = engines;
  const { encryption, recordQuota } = options;
  if (encryption !== undefined) {
    if (typeof encryption !== 'object' || encryption === null) {
      throw new OncelyConfigurationError(`${owner} option "encryption" must be { keys: [...] }.`);
    }
    coordinator = new EncryptedFlightCoordinator(coordinator, encryption);
    store = new EncryptedIdempotencyRecordStore(store, encryption);
  }
  if (recordQuota !== undefined) {
    if (typeof recordQuota?.quota?.take !== 'function') {
      throw new OncelyConfigurationError(
        `${owner} option "recordQuota" must be { quota, limit, windowMs } with quota an InMemoryRecordQuota or RedisRecordQuota.`,
      );
    }
    store = new QuotaLimitedIdempotencyRecordStore(store, recordQuota);
  }
  return { coordinator, store };
}
