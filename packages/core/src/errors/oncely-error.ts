/**
 * Marks every oncely error, under a key shared by all copies of this package: an app may load
 * both its CommonJS and its ESM build (a CommonJS app importing one adapter as ESM, say), and
 * then an error thrown by one copy is caught by code of the other.
 */
const ONCELY_ERROR = Symbol.for('@oncely/core:error');

/**
 * Base of every error oncely raises on purpose. `code` is stable and machine-readable; the HTTP
 * mapping (problem+json `type`, status) is derived from it in one place (`http/problem-details`).
 */
export abstract class OncelyError extends Error {
  /** Stable and machine-readable: what callers branch on, never the message. */
  abstract readonly code: string;

  static {
    Object.defineProperty(this.prototype, ONCELY_ERROR, { value: true });
  }

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }

  /**
   * `instanceof` for this class and its subclasses, across copies of the package: besides this
   * copy's instances it accepts an oncely error of the other copy whose class, or one of whose
   * base classes, has this class's name (class names are unique among oncely's errors).
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    if (typeof value !== 'object' || value === null || !(ONCELY_ERROR in value)) return false;
    let proto = Object.getPrototypeOf(value) as object | null;
    for (; proto !== null; proto = Object.getPrototypeOf(proto) as object | null) {
      if (Object.getOwnPropertyDescriptor(proto, 'constructor')?.value?.name === this.name) {
        return true;
      }
    }
    return false;
  }
}
