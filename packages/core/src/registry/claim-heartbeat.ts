import { types } from 'node:util';
import { randomUUID } from 'node:crypto';
import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';
import type { OncelyEventListener } from '../events/oncely-event.js';
import { OncelyEventDispatcher } from '../events/oncely-event-dispatcher.js';
import { answerWithin } from '../time/answer-within.js';
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
  /**
   * On a backend the start-up found unreachable and warned about: not waited for at `start`,
   * and not warned about again; the first renewal registers its claims.
   */
  readonly deferred?: boolean;
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
  /**
   * How long `start` waits for the registries to answer, in milliseconds, and `stop` for the
   * withdrawal: claims are an alarm, not a dependency of serving, so a silent backend must not
   * hold the boot (nor the shutdown) for long.
   */
  readonly bootTimeoutMs: number;
}

/**
 * Registers one app instance's claims where its records go, renews them on an unref'd timer and
 * withdraws them on `stop`. At `start`, a conflict with another service's live claim throws
 * `ForeignClaimError` (`onForeignClaim: 'fail'`) or is warned about and reported as a
 * `foreign_claim` event (`'warn'`), unless the other service is one of `serviceAliases`; conflicts
 * appearing later (another service booting with
 * `'warn'`) are warned about and reported likewise, once per pair, since a running app cannot
 * fail its boot any more. A registry that cannot be reached, or does not answer within
 * `bootTimeoutMs` at start, is warned about once and tried again on the next beat (a conflict it
 * reveals late is only warned about): claims are an alarm, not a dependency of serving.
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
  /** Targets whose failure was warned about (or needs no warning), until they answer again. */
  readonly #unreachable = new Set<ClaimTarget>();
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
   * table not migrated). Waits `bootTimeoutMs` at most: past it, the app's claims are warned
   * about as unregistered, and the announcement goes on in the background, as a beat would.
   * Each beat announces `claims()` again, so routes defined later join.
   */
  async start(claims: () => readonly RegistryClaim[]): Promise<void> {
    for (const target of this.targets) if (target.deferred) this.#unreachable.add(target);
    const announcing = this.#announce(claims(), true);
    const answer = await answerWithin(announcing, this.settings.bootTimeoutMs);
    if (answer.answered) {
      const conflicts = answer.value;
      if (conflicts.length > 0 && this.settings.onForeignClaim === 'fail') {
        throw new ForeignClaimError(conflicts);
      }
      this.#report(conflicts);
    } else {
      this.#warnUnregistered(this.targets, `no answer within ${this.settings.bootTimeoutMs} ms`);
      this.#beating = announcing
        .then(
          (found) => this.#report(found),
          // A claims table not migrated, found after the boot: it can only be warned about now.
          (error: unknown) => this.settings.warn(describe(error)),
        )
        .finally(() => (this.#beating = undefined));
    }
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
    const { bootTimeoutMs } = this.settings;
    // Bounded: an entry left behind lapses after its TTL anyway.
    if (this.#beating) await answerWithin(this.#beating, bootTimeoutMs);
    const withdrawals = [...this.#announced].map(([target, claims]) =>
      target.registry.withdraw(this.instance, claims),
    );
    this.#announced.clear();
    await answerWithin(Promise.allSettled(withdrawals), bootTimeoutMs);
  }

  async #announce(claims: readonly RegistryClaim[], atStart: boolean): Promise<ClaimConflict[]> {
    const conflicts: ClaimConflict[] = [];
    for (const target of this.targets) {
      const mine = claims.filter((claim) => target.mechanisms.has(claim.mechanism));
      if (mine.length === 0 || (atStart && target.deferred)) continue;
      try {
        const check = await target.registry.announce({
          instance: this.instance,
          claims: mine,
          ttlMs: this.settings.ttlMs,
        });
        this.#announced.set(target, mine);
        if (check.kind === 'conflicts') conflicts.push(...this.#foreign(check.conflicts));
        this.#unreachable.delete(target);
      } catch (error) {
        if (atStart && error instanceof OncelyConfigurationError) throw error;
        this.#warnUnregistered([target], describe(error));
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

  /**
   * Warns that the claims could not be registered on `targets`, unless every one of them was
   * already warned about and has not answered since.
   */
  #warnUnregistered(targets: readonly ClaimTarget[], reason: string): void {
    if (targets.every((target) => this.#unreachable.has(target))) return;
    for (const target of targets) this.#unreachable.add(target);
    this.settings.warn(
      `oncely could not register this app's claims (${reason}); other services claiming the same operations go unnoticed until it can. Retrying every ${this.settings.renewEveryMs} ms.`,
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
