import { describeOptionValue } from '../errors/describe-option-value.js';
import { KEY_SPEC_PROPERTIES } from '../key/key-spec.compiler.js';
import { RouteOptionsError } from './route-setup.errors.js';

/** Node's largest timer delay; a longer one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/** Longest `description` a route may declare. */
export const MAX_DESCRIPTION_LENGTH = 300;

const COMMON_KEYS = [
  'description',
  'shared',
  'maxResponseBytes',
  'missingUserStatus',
  'replayHeaders',
  'maxDuration',
];
/** Every option `@IdempotentKey` / `idempotent()` knows; any other is refused. */
export const IDEMPOTENT_OPTION_NAMES: ReadonlySet<string> = new Set<string>([
  ...KEY_SPEC_PROPERTIES,
  ...COMMON_KEYS,
  'idempotencyKey',
  'header',
  'transactional',
  'onBusy',
  'wait',
  'leaseTtl',
  'retention',
  'replayCacheTtl',
]);
/** Every option `@SingleFlight` / `singleFlight()` knows; any other is refused. */
export const SINGLE_FLIGHT_OPTION_NAMES: ReadonlySet<string> = new Set<string>([
  ...KEY_SPEC_PROPERTIES,
  ...COMMON_KEYS,
  'leaseTtl',
  'resultTtl',
  'errorTtl',
  'wait',
  'onBusy',
  'onCoordinatorDown',
]);

/** Reads and checks options one by one, failing with the route and the option's name. */
export class OptionChecker {
  constructor(
    readonly route: string,
    private readonly options: object,
    private readonly allowed: ReadonlySet<string>,
  ) {}

  fail(option: string, problem: string): never {
    throw new RouteOptionsError(this.route, option, problem);
  }

  unknownKeys(): void {
    for (const key of Object.keys(this.options)) {
      if (!this.allowed.has(key)) {
        this.fail(key, `unknown option. Known options: ${[...this.allowed].join(', ')}.`);
      }
    }
  }

  value(option: string, fallback: unknown, valid: (value: unknown) => boolean): unknown {
    const value = (this.options as Record<string, unknown>)[option];
    if (value === undefined) return fallback;
    if (!valid(value)) this.fail(option, `unexpected value ${describeOptionValue(value)}`);
    return value;
  }

  boolean(option: string, fallback: boolean): boolean {
    const value = (this.options as Record<string, unknown>)[option];
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean')
      this.fail(option, `must be true or false, got ${describeOptionValue(value)}`);
    return value;
  }

  /** One line of text (no line breaks, not blank), at most `max` characters, or left out. */
  line(option: string, max: number): string | undefined {
    const value = (this.options as Record<string, unknown>)[option];
    if (value === undefined) return undefined;
    if (
      typeof value !== 'string' ||
      value.trim() === '' ||
      /[\r\n]/.test(value) ||
      value.length > max
    ) {
      this.fail(
        option,
        `must be one line of text of at most ${max} characters, got ${describeOptionValue(value)}`,
      );
    }
    return value.trim();
  }

  oneOf<T extends string | number>(option: string, allowed: readonly T[], fallback: T): T {
    const value = (this.options as Record<string, unknown>)[option];
    if (value === undefined) return fallback;
    if (!allowed.includes(value as T)) {
      this.fail(
        option,
        `must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}, got ${describeOptionValue(value)}`,
      );
    }
    return value as T;
  }

  /** A whole number of milliseconds a timer can wait (Node fires longer ones at once). */
  timer(option: string, fallback: number): number {
    const value = (this.options as Record<string, unknown>)[option] ?? fallback;
    if (!Number.isSafeInteger(value) || (value as number) < 1 || (value as number) > MAX_TIMER_MS) {
      this.fail(
        option,
        `must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}, got ${describeOptionValue(value)}`,
      );
    }
    return value as number;
  }

  duration(option: string, fallback: number, min: number): number {
    const value = (this.options as Record<string, unknown>)[option] ?? fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
      this.fail(
        option,
        `must be a finite number of at least ${min} (milliseconds or bytes), got ${describeOptionValue(value)}`,
      );
    }
    return value;
  }
}
