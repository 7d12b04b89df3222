/**
 * Holds a stand-in's work in flight until the test opens it, so that duplicates are sent while
 * the first one is certainly still running (no sleeps, no races).
 */
export class Gate {
  /** Resolves once the work has reached the gate. */
  readonly entered: Promise<void>;
  readonly #opened: Promise<void>;
  #enter!: () => void;
  #open!: () => void;

  constructor() {
    this.entered = new Promise((resolve) => (this.#enter = resolve));
    this.#opened = new Promise((resolve) => (this.#open = resolve));
  }

  /** Called by the work: marks it entered, then waits for `open()`. */
  pass(): Promise<void> {
    this.#enter();
    return this.#opened;
  }

  open(): void {
    this.#open();
  }
}
