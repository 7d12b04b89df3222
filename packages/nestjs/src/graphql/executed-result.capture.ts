import type { ResponsePath } from './graphql-info.types.js';

/**
 * What the client received under one field: its data (`null` when an error nulled it or its
 * parent) and the errors whose `path` lies under it, as JSON, after the server formatted them.
 */
export interface ExecutedResult {
  readonly data: unknown;
  readonly errors: readonly FormattedError[];
}

/** An entry of a response's `errors`, as formatted for the client (its `path` is all oncely reads). */
export interface FormattedError {
  /** Where the error occurred: response keys and list indexes from the root. */
  readonly path?: readonly (string | number)[];
}

/** Apollo Server's response body, as far as oncely reads and rewrites it. */
export interface GraphQLResponseBody {
  /** `single` for one complete result; incremental delivery is left alone. */
  readonly kind: string;
  /** The complete result of a `single` body; replays write their fields into it. */
  singleResult?: {
    /** The result's `data`. */
    readonly data?: Record<string, unknown> | null;
    /** The result's `errors`. */
    readonly errors?: readonly FormattedError[];
  };
}

/** Hands one field's executed result on (to the durable record); `undefined`: there is none. */
export type ExecutedResultSink = (result: ExecutedResult | undefined) => Promise<void>;

/**
 * The fields of one GraphQL operation oncely keeps or replays, settled when the response is
 * about to be sent: a field run for the first time hands on what the client is receiving, a
 * replayed one gets the kept result written over whatever execution produced under it.
 */
export class ExecutedResultCapture {
  readonly #kept: { path: ResponsePath; sink: ExecutedResultSink }[] = [];
  readonly #replayed: { path: ResponsePath; result: ExecutedResult }[] = [];

  keep(path: ResponsePath, sink: ExecutedResultSink): void {
    this.#kept.push({ path, sink });
  }

  replay(path: ResponsePath, result: ExecutedResult): void {
    this.#replayed.push({ path, result });
  }

  /**
   * Waits until every kept result is stored, so a client that got its response is sure a retry
   * gets the same. Incremental delivery (`@defer`, `@stream`) is not read: nothing is kept.
   */
  async settle(body: GraphQLResponseBody): Promise<void> {
    const single = body.kind === 'single' ? body.singleResult : undefined;
    const kept = this.#kept.map(({ path, sink }) =>
      sink(
        single && {
          data: asJson(valueAt(single.data, path) ?? null),
          errors: asJson((single.errors ?? []).filter((error) => isUnder(error.path, path))),
        },
      ),
    );
    if (single && this.#replayed.length > 0) {
      const { errors: executedErrors = [], ...rest } = single;
      let data = single.data;
      let errors = executedErrors;
      for (const { path, result } of this.#replayed) {
        data = withValueAt(data, path, result.data);
        errors = [...errors.filter((error) => !isUnder(error.path, path)), ...result.errors];
      }
      body.singleResult = { ...rest, data, ...(errors.length > 0 && { errors }) };
    }
    await Promise.all(kept);
  }
}

const captures = new WeakMap<object, ExecutedResultCapture>();

/**
 * Starts the capture of an operation, keyed by its context value (the object resolvers receive
 * as their context); `undefined` when one is already running, e.g. for a plugin registered twice.
 */
export function startExecutedResultCapture(
  contextValue: unknown,
): ExecutedResultCapture | undefined {
  if (typeof contextValue !== 'object' || contextValue === null || captures.has(contextValue)) {
    return undefined;
  }
  const capture = new ExecutedResultCapture();
  captures.set(contextValue, capture);
  return capture;
}

/** The capture of the operation a resolver runs in, if the plugin watches it. */
export function executedResultCaptureOf(contextValue: unknown): ExecutedResultCapture | undefined {
  return typeof contextValue === 'object' && contextValue !== null
    ? captures.get(contextValue)
    : undefined;
}

function isUnder(errorPath: readonly (string | number)[] | undefined, path: ResponsePath): boolean {
  return errorPath !== undefined && path.every((key, index) => errorPath[index] === key);
}

function valueAt(data: unknown, path: ResponsePath): unknown {
  let at = data;
  for (const key of path) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<string | number, unknown>)[key];
  }
  return at;
}

/**
 * `data` with `value` at `path`, copying the objects on the way rather than writing into what
 * execution returned. A parent nulled by an error stays null: the first response had no value
 * there either.
 */
function withValueAt<T>(data: T, path: ResponsePath, value: unknown): T {
  if (path.length === 0) return value as T;
  if (typeof data !== 'object' || data === null) return data;
  const [key, ...rest] = path as [string | number, ...(string | number)[]];
  const copy = (Array.isArray(data) ? [...data] : { ...data }) as Record<string | number, unknown>;
  if (!(key in copy)) return data;
  copy[key] = withValueAt(copy[key], rest, value);
  return copy as T;
}

/** The value as the client read it: the kept copy is unaffected by later plugins. */
function asJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
