import { SharedFlightError } from './shared-flight.error.js';

/** What every failure policy keeps of a thrown error for the waiters of its flight. */
export interface SerializedError {
  /** The error's class name (`Error` for a thrown non-object). */
  readonly name: string;
  /** The error's message, or the thrown value as text. */
  readonly message: string;
  /** The error's `code`, when it had a string or numeric one. */
  readonly code?: string | number;
}

/** `value`'s own fields, or none: JavaScript lets code throw anything, not only objects. */
export function fieldsOf(value: unknown): Record<string, unknown> {
  return (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
}

export function serializeError(error: unknown): SerializedError {
  const source = fieldsOf(error);
  const code = source.code;
  return {
    name: typeof source.name === 'string' ? source.name : 'Error',
    message: typeof source.message === 'string' ? source.message : String(error),
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
  };
}

/**
 * A serialised failure as the `SharedFlightError` its waiters receive, with the `status` and
 * `body` it was kept with (500 and none unless a policy kept them). Reads defensively: the
 * payload may come from another node, through the coordinator.
 */
export function sharedFlightErrorOf(serialized: unknown): SharedFlightError {
  const source = fieldsOf(serialized);
  const code = source.code;
  return new SharedFlightError(
    typeof source.name === 'string' ? source.name : 'Error',
    typeof source.message === 'string' ? source.message : 'The shared flight failed',
    typeof source.status === 'number' ? source.status : 500,
    typeof code === 'string' || typeof code === 'number' ? code : undefined,
    source.body,
  );
}
