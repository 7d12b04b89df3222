import { describeOptionValue } from '../errors/describe-option-value.js';
import { KEY_NAME_PATTERN } from '../key/key-grammar.js';
import { KEY_SPEC_PROPERTIES } from '../key/key-spec.compiler.js';
import { MAX_KEY_NAME_LENGTH } from '../key/key.constants.js';
import { RouteOptionsError } from './route-setup.errors.js';

/** Most versions a route's `previousVersions` may list: each is one more record read per miss. */
const MAX_PREVIOUS_VERSIONS = 4;

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
  'previousVersions',
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

  /**
   * Versions a route had before `version`: distinct names a key spec accepts, none of them
   * `version` itself, at most `MAX_PREVIOUS_VERSIONS`.
   */
  previousVersions(version: string): readonly string[] {
    const value = (this.options as Record<string, unknown>).previousVersions;
    if (value === undefined) return [];
    const example = "for example version: 'v2', previousVersions: ['v1']";
    if (!Array.isArray(value)) {
      this.fail(
        'previousVersions',
        `must be an array of versions (${example}), got ${describeOptionValue(value)}`,
      );
    }
    if (value.length > MAX_PREVIOUS_VERSIONS) {
      this.fail(
        'previousVersions',
        `lists ${value.length} versions, at most ${MAX_PREVIOUS_VERSIONS} are read: each one is one more record read on every miss. Keep the versions whose records may still be retried, and drop those whose retention has passed.`,
      );
    }
    const seen = new Set<string>();
    for (const entry of value as unknown[]) {
      if (typeof entry !== 'string' || !KEY_NAME_PATTERN.test(entry)) {
        this.fail(
          'previousVersions',
          `${describeOptionValue(entry)} is not a version: write each one as the key spec's version was written, 1 to ${MAX_KEY_NAME_LENGTH} characters of [A-Za-z0-9._~-] starting with a letter or digit (${example}).`,
        );
      }
      if (entry === version) {
        this.fail(
          'previousVersions',
          `"${entry}" is the route's current version${'version' in this.options ? '' : ' (the default: the route declares none)'}. Declare the bumped version and list only the ones it had before (${example}).`,
        );
      }
      if (seen.has(entry)) {
        this.fail(
          'previousVersions',
          `"${entry}" is listed twice. List each previous version once.`,
        );
      }
      seen.add(entry);
    }
    return [...seen];
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
