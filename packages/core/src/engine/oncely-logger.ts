import { describeOptionValue } from '../errors/describe-option-value.js';
import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';

/**
 * Where oncely's start-up lines (what each adapter works on) and warnings (an unreachable
 * backend, a foreign claim) go. `console` is one, and so is Nest's `Logger`; wrap others, e.g.
 * `{ log: (m) => pino.info(m), warn: (m) => pino.warn(m) }`.
 */
export interface OncelyLogger {
  /** A start-up line: what oncely connected to. */
  log(message: string): void;
  /** Something to act on that does not stop the app: an unreachable backend, a foreign claim. */
  warn(message: string): void;
}

const SILENT: OncelyLogger = { log: () => undefined, warn: () => undefined };

/** The `logger` option: `fallback` when left out, a silent one for `false`. */
export function loggerOption(owner: string, value: unknown, fallback: OncelyLogger): OncelyLogger {
  if (value === undefined) return fallback;
  if (value === false) return SILENT;
  if (isLogger(value)) return value;
  throw new OncelyConfigurationError(
    `${owner} option "logger" must be false (no start-up lines nor warnings) or an object with log(message) and warn(message), such as console or Nest's Logger, got ${describeOptionValue(value)}.`,
  );
}

function isLogger(value: unknown): value is OncelyLogger {
  const candidate = value as Partial<OncelyLogger> | null;
  return typeof candidate?.log === 'function' && typeof candidate.warn === 'function';
}
