/** A promise with its resolver, created on first use by either side. */
interface Latch {
  readonly promise: Promise<void>;
  readonly release: () => void;
}

function latch(): Latch {
  let release!: () => void;
  const promise = new Promise<void>((resolve) => (release = resolve));
  return { promise, release };
}

/**
 * The suite's window into a fixture app, handed to the app factory: handlers count their
 * executions and wait at gates through it, and the app's auth layer reports arrivals. The suite
 * reads it in-process, so execution counts are the handlers' own, not what HTTP suggests.
 */
export class ConformanceProbe {
  private readonly counts = new Map<string, number>();
  private readonly gates = new Map<string, Latch>();
  private readonly entries = new Map<string, Latch>();
  private readonly arrivals = new Map<string, number>();
  private readonly arrivalWatchers: { path: string; count: number; release: () => void }[] = [];
  private gatesOpened = false;

  /** Called by a handler each time it runs; returns this execution's number (1-based). */
  hit(name: string): number {
    const count = (this.counts.get(name) ?? 0) + 1;
    this.counts.set(name, count);
    return count;
  }

  /** How many times handlers ran under `name`. */
  executions(name: string): number {
    return this.counts.get(name) ?? 0;
  }

  /** Called by a handler: marks the gate entered, then waits until the suite opens it. */
  async pass(gate: string): Promise<void> {
    this.latch(this.entries, gate).release();
    await this.latch(this.gates, gate).promise;
  }

  /** Resolves once a handler waits at the gate. */
  entered(gate: string): Promise<void> {
    return this.latch(this.entries, gate).promise;
  }

  /** Lets every handler waiting at (or later reaching) the gate go on. */
  open(gate: string): void {
    this.latch(this.gates, gate).release();
  }

  /** Opens every gate, so no handler stays held after a case, failed or not. */
  openAll(): void {
    for (const gate of this.gates.values()) gate.release();
    this.gatesOpened = true;
  }

  /** Called by the app's auth layer, before oncely, with the request path (no query). */
  arrive(path: string): void {
    const count = (this.arrivals.get(path) ?? 0) + 1;
    this.arrivals.set(path, count);
    for (const watcher of this.arrivalWatchers) {
      if (watcher.path === path && count >= watcher.count) watcher.release();
    }
  }

  /** Resolves once `count` requests to `path` have reached the app. */
  arrived(path: string, count: number): Promise<void> {
    if ((this.arrivals.get(path) ?? 0) >= count) return Promise.resolve();
    return new Promise((release) => this.arrivalWatchers.push({ path, count, release }));
  }

  private latch(map: Map<string, Latch>, name: string): Latch {
    let found = map.get(name);
    if (!found) {
      found = latch();
      map.set(name, found);
      if (this.gatesOpened && map === this.gates) found.release();
    }
    return found;
  }
}
