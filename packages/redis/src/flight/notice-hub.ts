/**
 * Completion notices for every coordinator of a process that talks to the same Redis: one
 * subscriber connection (opened by the first acquire or wait, closed when the last coordinator
 * using it closes) and the local waiters by channel and business key. A message wakes only the
 * waiters of its key; a waiter that is woken, times out or aborts removes itself, so no per-key
 * state outlives a wait.
 *
 * Notices published while the subscription is not (yet, or after a reconnect, again) in place
 * are lost, so each confirmed SUBSCRIBE is followed by a look at the leases of the keys being
 * waited for: a lease that is gone means the notice was missed, and its waiters are woken.
 */
import type { Cluster, Redis } from 'ioredis';

type Wake = () => void;

/** Of `keys`, those whose lease no longer exists. */
export type LeaseCheck = (keys: readonly string[]) => Promise<readonly string[]>;

interface Channel {
  readonly checks: Set<LeaseCheck>;
  readonly subscribed: Promise<void>;
  readonly confirm: () => void;
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
   * confirmed. `check` looks up leases after each (re)subscription until `forget` removes it.
   */
  listen(channel: string, check: LeaseCheck): Promise<void> {
    let entry = this.channels.get(channel);
    if (!entry) {
      let confirm!: () => void;
      const subscribed = new Promise<void>((resolve) => (confirm = resolve));
      entry = { checks: new Set(), subscribed, confirm };
      this.channels.set(channel, entry);
      const subscriber = (this.subscriber ??= this.start());
      // Otherwise the 'ready' handler subscribes, on this connection and after every reconnect.
      if (subscriber.status === 'ready') this.subscribe(channel);
    }
    entry.checks.add(check);
    return entry.subscribed;
  }

  forget(channel: string, check: LeaseCheck): void {
    this.channels.get(channel)?.checks.delete(check);
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
    subscriber.on('message', (channel: string, key: string) => {
      const byKey = this.waiters.get(channel);
      if (byKey) this.wakeKey(byKey, key);
    });
    return subscriber;
  }

  private subscribe(channel: string): void {
    const subscriber = this.subscriber;
    subscriber?.subscribe(channel).then(
      () => {
        if (this.subscriber !== subscriber) return;
        this.channels.get(channel)?.confirm();
        this.recheck(channel);
      },
      // A SUBSCRIBE cut off by a disconnect is sent again by the next 'ready'.
      () => undefined,
    );
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
