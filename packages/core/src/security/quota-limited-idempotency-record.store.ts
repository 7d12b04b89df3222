import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';
import type {
  BeginOptions,
  BeginOutcome,
  IdempotencyRecordStore,
} from '../record/idempotency-record-store.port.js';
import { ForwardingIdempotencyRecordStore } from './forwarding-idempotency-record.store.js';
import type { RecordQuota } from './record-quota.port.js';
import { RecordQuotaExceededError } from './record-quota-exceeded.error.js';

/** The `recordQuota` option: how many new records each scope may create per window. */
export interface RecordQuotaOptions {
  /** Where counts are kept: `InMemoryRecordQuota` or, across processes, `RedisRecordQuota`. */
  readonly quota: RecordQuota;
  /** Most new records one scope may create per window. */
  readonly limit: number;
  /** Length of the fixed windows counts are kept in, in milliseconds. */
  readonly windowMs: number;
  /**
   * The scope an identity counts against; `undefined` leaves it unlimited. Default: namespace and
   * scope segment (`ns:op:v:scope:target` → `ns:scope`), i.e. the tenant/user the route keys on.
   */
  readonly scopeOf?: (identity: string) => string | undefined;
}

/**
 * Caps how many idempotency records each scope creates per fixed window, in front of any store.
 * Only `begin` calls that create (or take over) a record count, and each identity once per
 * window: replays, 409s and 422s are given back, over the limit they are still answered, and a
 * retry of a request whose record was released (answered 5xx) is not counted again, so a client
 * retrying is never refused for retrying. A new record over the limit is released at once and
 * the call throws `RecordQuotaExceededError` (429 problem+json): nothing stays written.
 * The bound on stored records per scope is `limit × retention / windowMs`.
 */
export class QuotaLimitedIdempotencyRecordStore extends ForwardingIdempotencyRecordStore {
  readonly #options: Required<RecordQuotaOptions>;

  constructor(store: IdempotencyRecordStore, options: RecordQuotaOptions) {
    super(store);
    for (const name of ['limit', 'windowMs'] as const) {
      const value = options[name];
      if (!Number.isSafeInteger(value) || value <= 0) {
        throw new OncelyConfigurationError(
          `QuotaLimitedIdempotencyRecordStore option "${name}" must be a positive integer, got ${JSON.stringify(value)}.`,
        );
      }
    }
    this.#options = { scopeOf: defaultScopeOf, ...options };
  }

  /**
   * Counts a new record against its scope before it is created; over the limit, releases it and
   * throws `RecordQuotaExceededError`. Replays, 409s and 422s are never refused.
   */
  override async begin(
    identity: string,
    digest: string,
    options: BeginOptions,
  ): Promise<BeginOutcome> {
    const { quota, limit, windowMs, scopeOf } = this.#options;
    const scope = scopeOf(identity);
    if (scope === undefined) return this.store.begin(identity, digest, options);
    const decision = await quota.take(scope, identity, limit, windowMs);
    if (decision.kind === 'exceeded') {
      // Over the limit only new records are refused: a replay, 409 or 422 still answers as usual.
      const outcome = await this.store.begin(identity, digest, options);
      if (outcome.kind !== 'acquired') return outcome;
      await this.store.release(outcome.lease);
      throw new RecordQuotaExceededError(scope, limit, decision.retryAfterMs);
    }
    // A retry of an identity this window already counted: its record was released (a 5xx, a
    // lost lease), and the quota it holds still covers it.
    if (decision.kind === 'already_counted') return this.store.begin(identity, digest, options);
    let outcome: BeginOutcome | undefined;
    try {
      outcome = await this.store.begin(identity, digest, options);
      return outcome;
    } finally {
      if (outcome?.kind !== 'acquired') await quota.giveBack(scope, identity, decision.window);
    }
  }
}

function defaultScopeOf(identity: string): string | undefined {
  const segments = identity.split(':');
  return segments.length === 5 ? `${segments[0]}:${segments[3]}` : undefined;
}
