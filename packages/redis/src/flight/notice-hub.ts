/**
 * Completion notices for every coordinator of a process that talks to the same Redis: one
 * subscriber connection (opened by the first acquire or wait, closed when the last coordinator
 * using it closes) and the local waiters by channel and business key. A message wakes only the
 * waiters of its key; a waiter that is woken, times out or aborts removes itself, so no per-key
 * state outlives a wait.
 *
 * Notices published while the subscription is not (yet, or after a reconnect, again) in place
 * are lost, so each confirmed SUBSCRIBE is followed by a look at the leases of the keys being
 * waited for: a lease that is gone means the notice was missed, and its waiters are woken. For
 * the same reason an observer (a near cache) hears when the subscriber connection closes and when
 * a subscription is confirmed again: whatever it derived from notices must be started afresh.
 */
import type { Cluster, Redis } from 'ioredis';
import { parseNotice, type NoticeKind } from './flight-notices.js';

type Wake = () => void;

/** Of `keys`, those whose lease no longer exists. */
export type LeaseCheck = (keys: readonly string[]) => Promise<readonly string[]>;

/** Hears every notice of a channel, and whether notices flow (none may be lost) or not. */
export interface NoticeObserver {
  notice(kind: NoticeKind, key: string): void;
  /**
   * Notices may have been lost: the subscriber connection closed (`live` false) or a
   * subscription was confirmed (`live` true: from now on no notice is missed).
   */
  reset(live: boolean): void;
}

interface Channel {
  readonly checks: Set<LeaseCheck>;
  readonly observers: Set<NoticeObserver>;
  readonly subscribed: Promise<void>;
  readonly confirm: () => void;
  /** Subscribed on the current connection, which has not closed since. */
  live: boolean;
}

/** setTimeout turns longer delays into 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class NoticeHub {
  private subscriber: Redis | Cluster | undefined;
  private readonly channels = new Map<string, Channel>();
  private readonly waiters = new Map<string, Map<string, Set<Wake>>>();
  private users = 0;

  constructor(
    private readonly createSubscriber: () => Redis | Cluster,
    private readonly onUnused: () => void,
  ) {}

  /**
   * Subscribes to `channel` (once for all its users) and resolves when the subscription is
   * confirmed. `check` looks up leases after each (re)subscription, and `observer` hears the
   * channel's notices and resets, until `forget` removes them.
   */
  listen(channel: string, check: LeaseCheck, observer?: NoticeObserver): Promise<void> {
    let entry = this.channels.get(channel);
    if (!entry) {
      let confirm!: () => void;
      const subscribed = new Promise<void>((resolve) => (confirm = resolve));
      entry = { checks: new Set(), observers: new Set(), subscribed, confirm, live: false };
      this.channels.set(channel, entry);
      const subscriber = (this.subscriber ??= this.start());
      // Otherwise the 'ready' handler subscribes, on this connection and after every reconnect.
      if (subscriber.status === 'ready') this.subscribe(channel);
    }
    entry.checks.add(check);
    if (observer && !entry.observers.has(observer)) {
      entry.observers.add(observer);
      // Another user's subscription is already in place: this observer misses nothing from now.
      if (entry.live) observer.reset(true);
    }
    return entry.subscribed;
  }

  forget(channel: string, check: LeaseCheck, observer?: NoticeObserver): void {
    const entry = this.channels.get(channel);
    entry?.checks.delete(check);
    if (observer && entry?.observers.delete(observer)) observer.reset(false);
  }

  /** Resolves on the next notice for `key` on `channel`, at `timeoutMs`, or on abort. */
  wait(channel: string, key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    let byKey = this.waiters.get(channel);
    if (!byKey) this.waiters.set(channel, (byKey = new Map()));
    let wakes = byKey.get(key);
    if (!wakes) byKey.set(key, (wakes = new Set()));
    const [keyWaiters, keyWakes] = [byKey, wakes];
    return new Promise((resolve) => {
      const wake: Wake = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', wake);
        keyWakes.delete(wake);
        if (keyWakes.size === 0 && keyWaiters.get(key) === keyWakes) keyWaiters.delete(key);
        resolve();
      };
      const timer = setTimeout(wake, Math.min(Math.max(0, timeoutMs), MAX_TIMER_MS));
      signal?.addEventListener('abort', wake, { once: true });
      keyWakes.add(wake);
    });
  }

  /** Keys of `channel` with at least one local waiter. */
  waitingKeys(channel: string): number {
    return this.waiters.get(channel)?.size ?? 0;
  }

  retain(): void {
    this.users += 1;
  }

  /** Drops one user; the last one closes the subscriber and ends the waits still pending. */
  release(): void {
    this.users -= 1;
    if (this.users > 0) return;
    this.onUnused();
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    for (const entry of this.channels.values()) this.setLive(entry, false);
    this.channels.clear();
    for (const byKey of this.waiters.values()) {
      for (const key of [...byKey.keys()]) this.wakeKey(byKey, key);
    }
    subscriber?.disconnect();
  }

  private start(): Redis | Cluster {
    const subscriber = this.createSubscriber();
    // Connection errors are expected while Redis is down; ioredis keeps reconnecting.
    subscriber.on('error', () => undefined);
    subscriber.on('ready', () => {
      for (const channel of this.channels.keys()) this.subscribe(channel);
    });
    // From here until the next confirmed SUBSCRIBE, notices may be lost.
    subscriber.on('close', () => {
      if (this.subscriber !== subscriber) return;
      for (const entry of this.channels.values()) this.setLive(entry, false);
    });
    subscriber.on('message', (channel: string, message: string) => {
      const notice = parseNotice(message);
      if (!notice) return;
      for (const observer of this.channels.get(channel)?.observers ?? []) {
        observer.notice(notice.kind, notice.key);
      }
      const byKey = this.waiters.get(channel);
      if (byKey && notice.kind === 'released') this.wakeKey(byKey, notice.key);
    });
    return subscriber;
  }

  private subscribe(channel: string): void {
    const subscriber = this.subscriber;
    subscriber?.subscribe(channel).then(
      () => {
        const entry = this.channels.get(channel);
        if (this.subscriber !== subscriber || !entry) return;
        entry.confirm();
        this.setLive(entry, true);
        this.recheck(channel);
      },
      // A SUBSCRIBE cut off by a disconnect is sent again by the next 'ready'.
      () => undefined,
    );
  }

  private setLive(entry: Channel, live: boolean): void {
    entry.live = live;
    for (const observer of entry.observers) observer.reset(live);
  }

  private recheck(channel: string): void {
    const byKey = this.waiters.get(channel);
    const [check] = this.channels.get(channel)?.checks ?? [];
    if (!byKey || byKey.size === 0 || !check) return;
    check([...byKey.keys()]).then(
      (gone) => gone.forEach((key) => this.wakeKey(byKey, key)),
      // Redis unreachable again: the waiters fall back to their timeouts.
      () => undefined,
    );
  }

  private wakeKey(byKey: Map<string, Set<Wake>>, key: string): void {
    const wakes = byKey.get(key);
    if (wakes) for (const wake of [...wakes]) wake();
  }
}

const hubs = new Map<unknown, NoticeHub>();

/**
 * The process-wide hub for one Redis identity (a client instance, or the serialised options of
 * created clients), retained for the caller, who calls `release()` when done.
 */
export function retainNoticeHub(
  identity: unknown,
  createSubscriber: () => Redis | Cluster,
): NoticeHub {
  let hub = hubs.get(identity);
  if (!hub) {
    const created = new NoticeHub(createSubscriber, () => {
      if (hubs.get(identity) === created) hubs.delete(identity);
    });
    hubs.set(identity, created);
    hub = created;
  }
  hub.retain();
  return hub;
}
