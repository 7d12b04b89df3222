import { createHash } from 'node:crypto';
import type {
  ClaimAnnouncement,
  ClaimCheck,
  ClaimConflict,
  ClaimRegistry,
  RegistryClaim,
} from '@oncely/core';
import {
  claimCheckOf,
  claimSlot,
  isForeignClaim,
  systemClock,
  type Clock,
} from '@oncely/core/adapter';
import type { DataSource } from 'typeorm';
import { ClaimTableNotMigratedError } from './claim-table-not-migrated.error.js';
import { claimTableName } from './claim-table.js';
import { qualifiedTable } from './qualified-table.js';
import { isUniqueViolation } from './record-dialect.js';
import { UnguardedRecordConnection } from './unguarded-record-connection.js';
import { UninitializedDataSourceError } from './uninitialized-data-source.error.js';

/** Options of `TypeOrmClaimRegistry`. */
export interface TypeOrmClaimRegistryOptions {
  /** Time source of the entries' expiry; the system clock by default. */
  readonly clock?: Clock;
}

interface ClaimStatements {
  readonly update: string;
  readonly insert: string;
  readonly prune: string;
  readonly others: string;
  readonly withdraw: string;
}

/**
 * Claims of the services sharing one database, in `oncely_claim` (created by
 * `CreateOncelySchema1796256000000`): one row per app instance and claimed operation, unique
 * on both, with its expiry. Announcing writes the instance's row, deletes the operation's expired
 * rows and reads the others, each one auto-committed statement: of two services announcing at
 * once, at least the later one sees the other. Replicas of one service each keep a row; one
 * withdrawing or dying takes only its own away. Expiry uses the announcing app's clock: keep the
 * hosts' clocks in sync (the TTL, 30 s by default, dwarfs the usual skew). What
 * `TypeOrmIdempotencyRecordStore` offers as its `claimRegistry()`.
 */
export class TypeOrmClaimRegistry implements ClaimRegistry {
  private readonly clock: Clock;
  private readonly connection: UnguardedRecordConnection;
  private statementsBuilt: ClaimStatements | undefined;
  private verified: Promise<void> | undefined;

  /** @param dataSource stays yours: the registry never initialises or destroys it. */
  constructor(
    private readonly dataSource: DataSource,
    options: TypeOrmClaimRegistryOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.connection = new UnguardedRecordConnection(dataSource, 10_000);
  }

  async announce({ instance, claims, ttlMs }: ClaimAnnouncement): Promise<ClaimCheck> {
    await this.verify();
    const conflicts: ClaimConflict[] = [];
    for (const claim of claims) {
      const slotHash = hashOf(claimSlot(claim));
      const now = this.clock.now();
      await this.write(claim, slotHash, instance, now + ttlMs);
      await this.connection.execute(this.statements.prune, [slotHash, now]);
      const { records } = await this.connection.execute(this.statements.others, [
        slotHash,
        instance,
        now,
      ]);
      for (const row of records as { claim: string }[]) {
        const other = parseClaim(row.claim);
        if (other && isForeignClaim(claim, other)) conflicts.push({ claim, foreign: other });
      }
    }
    return claimCheckOf(conflicts);
  }

  async withdraw(instance: string, claims: readonly RegistryClaim[]): Promise<void> {
    for (const claim of claims) {
      await this.connection.execute(this.statements.withdraw, [hashOf(claimSlot(claim)), instance]);
    }
  }

  /** Updates the instance's row, or inserts it; a concurrent insert of the same row updates. */
  private async write(
    claim: RegistryClaim,
    slotHash: string,
    instance: string,
    expiresAt: number,
  ): Promise<void> {
    const values = [claim.owner, claim.shared ? 1 : 0, JSON.stringify(claim), expiresAt];
    const update = () =>
      this.connection.execute(this.statements.update, [...values, slotHash, instance]);
    if ((await update()).affected > 0) return;
    try {
      await this.connection.execute(this.statements.insert, [
        slotHash,
        `${claim.mechanism}|${claim.namespace}:${claim.operation}:${claim.version}`.slice(0, 255),
        instance,
        ...values,
      ]);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      await update();
    }
  }

  /** Refuses a missing claims table once, at the first announcement (start-up). */
  private verify(): Promise<void> {
    this.verified ??= (async () => {
      if (!this.dataSource.isInitialized) throw new UninitializedDataSourceError();
      const runner = this.dataSource.createQueryRunner();
      try {
        if (!(await runner.hasTable(claimTableName))) {
          throw new ClaimTableNotMigratedError(qualifiedTable(this.dataSource, claimTableName));
        }
      } finally {
        await runner.release();
      }
    })();
    this.verified.catch(() => (this.verified = undefined));
    return this.verified;
  }

  private get statements(): ClaimStatements {
    if (this.statementsBuilt) return this.statementsBuilt;
    const { driver } = this.dataSource;
    const c = (name: string) => driver.escape(name);
    const table = qualifiedTable(this.dataSource, claimTableName, c);
    const postgres = this.connection.dialect === 'postgres';
    const sql = (text: string) => {
      let index = 0;
      return postgres ? text.replace(/\?/g, () => `$${++index}`) : text;
    };
    this.statementsBuilt = {
      update: sql(
        `UPDATE ${table} SET ${c('service')} = ?, ${c('shared')} = ?, ${c('claim')} = ?, ${c('expires_at')} = ? WHERE ${c('slot_hash')} = ? AND ${c('instance')} = ?`,
      ),
      insert: sql(
        `INSERT INTO ${table} (${c('slot_hash')}, ${c('slot')}, ${c('instance')}, ${c('service')}, ${c('shared')}, ${c('claim')}, ${c('expires_at')}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      prune: sql(`DELETE FROM ${table} WHERE ${c('slot_hash')} = ? AND ${c('expires_at')} <= ?`),
      others: sql(
        `SELECT ${c('claim')} AS ${c('claim')} FROM ${table} WHERE ${c('slot_hash')} = ? AND ${c('instance')} <> ? AND ${c('expires_at')} > ?`,
      ),
      withdraw: sql(`DELETE FROM ${table} WHERE ${c('slot_hash')} = ? AND ${c('instance')} = ?`),
    };
    return this.statementsBuilt;
  }
}

function hashOf(slot: string): string {
  return createHash('sha256').update(slot).digest('hex');
}

function parseClaim(json: string): RegistryClaim | undefined {
  try {
    const claim = JSON.parse(json) as Partial<RegistryClaim> | null;
    return typeof claim?.owner === 'string' ? (claim as RegistryClaim) : undefined;
  } catch {
    return undefined;
  }
}
