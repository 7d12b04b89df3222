import { types } from 'node:util';
import { randomUUID } from 'node:crypto';
import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';
import type { OncelyEventListener } from '../events/oncely-event.js';
import { OncelyEventDispatcher } from '../events/oncely-event-dispatcher.js';
import type { ClaimConflict, ClaimRegistry } from './claim-registry.port.js';
import { claimedOperation } from './claim-registry.port.js';
import { ForeignClaimError } from './foreign-claim.error.js';
import { isOwnService } from '../errors/own-service.js';
import type { RegistryClaim } from './registry-claim.js';

/** What a conflict with another service's live claim does at start-up. */
export type OnForeignClaim = 'fail' | 'warn';

/** A registry and the mechanisms whose claims go to it. */
export interface ClaimTarget {
  readonly registry: ClaimRegistry;
  readonly mechanisms: ReadonlySet<RegistryClaim['mechanism']>;
}

/** How the heartbeat runs. */
export interface ClaimHeartbeatSettings {
  /** How long an entry lives unless renewed, in milliseconds. */
  readonly ttlMs: number;
  /** How often it is renewed, in milliseconds; below `ttlMs`. */
  readonly renewEveryMs: number;
  readonly onForeignClaim: OnForeignClaim;
  /**
   * Other services whose claims are this app's own (the `serviceAliases` option, while the
   * service is renamed): the registries list them as conflicts, and the heartbeat drops them.
   */
  readonly serviceAliases?: ReadonlySet<string>;
  readonly events: readonly OncelyEventListener[];
  /** Where warnings go (Nest's logger, `console.warn`, …). */
  readonly warn: (message: string) => void;
}

/**
 * Registers one app instance's claims where its records go, renews them on an unref'd timer and
 * withdraws them on `stop`. At `start`, a conflict with another service's live claim throws
 * `ForeignClaimError` (`onForeignClaim: 'fail'`) or is warned about and reported as a
 * `foreign_claim` event (`'warn'`), unless the other service is one of `serviceAliases`; conflicts
 * appearing later (another service booting with
 * `'warn'`) are warned about and reported likewise, once per pair, since a running app cannot
 * fail its boot any more. A registry that cannot be reached is warned about and tried again on
 * the next beat: claims are an alarm, not a dependency of serving.
 */
export class ClaimHeartbeat {
  /** This process's id in every registry. */
  readonly instance = randomUUID();
  readonly #events: OncelyEventDispatcher;
  /** The claims announced so far, per target, to withdraw on `stop`. */
  readonly #announced = new Map<ClaimTarget, readonly RegistryClaim[]>();
  /** Conflicts already reported, so each is reported once. */
  readonly #reported = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  #unreachable = false;
  #stopped = false;

  constructor(
    private readonly targets: readonly ClaimTarget[],
    private readonly settings: ClaimHeartbeatSettings,
  ) {
    this.#events = new OncelyEventDispatcher(settings.events);
  }

  /**
   * Announces `claims()` and starts the timer; rejects with `ForeignClaimError` on a conflict
   * when `onForeignClaim` is `'fail'`, or with a registry's `OncelyConfigurationError` (a claims
   * table not migrated). Each beat announces `claims()` again, so routes defined later join.
   */
  async start(claims: () => readonly RegistryClaim[]): Promise<void> {
    const conflicts = await this.#announce(claims(), true);
    if (conflicts.length > 0 && this.settings.onForeignClaim === 'fail') {
      throw new ForeignClaimError(conflicts);
    }
    this.#report(conflicts);
    if (this.#stopped) return;
    this.#timer = setInterval(() => {
      this.#beating ??= this.#announce(claims(), false)
        .then((found) => this.#report(found))
        .finally(() => (this.#beating = undefined));
    }, this.settings.renewEveryMs);
    // Renewal must never keep a process alive that has nothing else to do.
    this.#timer.unref();
  }

  /**
   * Stops renewing and withdraws this instance's entries; other instances' entries stay. Calling
   * it again withdraws nothing more.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#beating;
    await Promise.allSettled(
      [...this.#announced].map(([target, claims]) =>
        target.registry.withdraw(this.instance, claims),
      ),
    );
    this.#announced.clear();
  }

  async #announce(claims: readonly RegistryClaim[], atStart: boolean): Promise<ClaimConflict[]> {
    const conflicts: ClaimConflict[] = [];
    for (const target of this.targets) {
      const mine = claims.filter((claim) => target.mechanisms.has(claim.mechanism));
      if (mine.length === 0) continue;
      try {
        const check = await target.registry.announce({
          instance: this.instance,
          claims: mine,
          ttlMs: this.settings.ttlMs,
        });
        this.#announced.set(target, mine);
        if (check.kind === 'conflicts') conflicts.push(...this.#foreign(check.conflicts));
        this.#unreachable = false;
      } catch (error) {
        if (atStart && error instanceof OncelyConfigurationError) throw error;
        if (!this.#unreachable) {
          this.settings.warn(
            `oncely could not register this app's claims (${describe(error)}); other services claiming the same operations go unnoticed until it can. Retrying every ${this.settings.renewEveryMs} ms.`,
          );
        }
        this.#unreachable = true;
      }
    }
    return conflicts;
  }

  /** The conflicts with services that are not this one under another name. */
  #foreign(conflicts: readonly ClaimConflict[]): readonly ClaimConflict[] {
    const { serviceAliases } = this.settings;
    if (serviceAliases === undefined) return conflicts;
    return conflicts.filter(
      ({ claim, foreign }) => !isOwnService(foreign.owner, claim.owner, serviceAliases),
    );
  }

  #report(conflicts: readonly ClaimConflict[]): void {
    for (const conflict of conflicts) {
      const { claim, foreign } = conflict;
      const id = `${claim.mechanism}|${claimedOperation(claim)}|${foreign.owner}`;
      if (this.#reported.has(id)) continue;
      this.#reported.add(id);
      this.settings.warn(new ForeignClaimError([conflict]).message);
      this.#events.emit({
        mechanism: claim.mechanism,
        outcome: 'foreign_claim',
        operation: claimedOperation(claim),
        key: claimedOperation(claim),
        owner: claim.owner,
        foreignOwner: foreign.owner,
      });
    }
  }
}

function describe(error: unknown): string {
  return types.isNativeError(error) ? error.message : String(error);
}
