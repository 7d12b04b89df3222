import type { CanonicalFailure } from './canonical-string.js';
import { KeyInputError, type KeyInputErrorReason } from './key-input.error.js';
import { MAX_CANONICAL_INPUT_LENGTH, MAX_INPUT_DEPTH } from './key.constants.js';

/**
 * Where one canonicalisation stands: the path for error messages, the objects being walked (so a
 * cycle is found) and the text met so far (so a huge input fails before it is hashed).
 */
export class CanonicalWalk {
  readonly path: (string | number)[] = [];
  /** Outermost first; short (at most MAX_INPUT_DEPTH), so an array. */
  private readonly ancestors: object[] = [];
  private size = 0;

  /** Steps into `value` at `depth`, unless it nests too deep or contains itself. */
  enter(value: object, depth: number): void {
    if (depth >= MAX_INPUT_DEPTH) {
      throw this.fail('too_deep');
    }
    if (this.ancestors.includes(value)) {
      throw this.fail('cycle');
    }
    this.ancestors.push(value);
  }

  leave(): void {
    this.ancestors.pop();
  }

  /** Counts text towards the size limit as it is met. */
  grow<T extends string | number>(amount: T): T {
    this.size += typeof amount === 'number' ? amount : amount.length + 2;
    if (this.size > MAX_CANONICAL_INPUT_LENGTH) {
      throw this.fail('too_large');
    }
    return amount;
  }

  /** The error for the value at the current path. */
  fail(reason: KeyInputErrorReason, found?: string): KeyInputError {
    return new KeyInputError(
      reason,
      this.path.length === 0 ? '(root)' : this.path.join('.'),
      found,
    );
  }

  /** `fail` for the string rules, made only when a string needs them (most never do). */
  get failure(): CanonicalFailure {
    return (reason, found) => this.fail(reason, found);
  }
}
