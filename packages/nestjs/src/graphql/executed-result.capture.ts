import type { ResponsePath } from './graphql-info.types.js';

/**
 * What the client received under one field: its data (`null` when an error under it nulled it)
 * and the errors whose `path` lies under it, as JSON, after the server formatted them, with the
 * field's response path they were read at (a replay under another alias re-roots them there).
 */
export interface ExecutedResult {
  readonly path: ResponsePath;
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

/**
 * Hands one field's executed result on (to the durable record); `undefined`: nothing of the field
 * reached the client (incremental delivery, or an error elsewhere nulled its parent).
 */
export type ExecutedResultSink = (result: ExecutedResult | undefined) => Promise<void>;

/** How an idempotent field of the operation ended: its value, and its kept result if replayed. */
export interface FieldOutcome {
  readonly value: unknown;
  readonly replayed?: ExecutedResult;
}

/** An idempotent field the operation runs under one key, for its later aliases to share. */
export interface FieldCall {
  /** The input's digest: an alias with other arguments is another payload for the key. */
  readonly digest: string;
  readonly selection: string;
  readonly path: ResponsePath;
  readonly outcome: Promise<FieldOutcome>;
}

/**
 * The fields of one GraphQL operation oncely keeps or replays, settled when the response is
 * about to be sent: a field run for the first time hands on what the client is receiving, a
 * replayed one gets the kept result written over whatever execution produced under it.
 */
export class ExecutedResultCapture {
  readonly #kept: { path: ResponsePath; sink: ExecutedResultSink }[] = [];
  readonly #replayed: { path: ResponsePath; result: ExecutedResult }[] = [];
  readonly #mirrored: { path: ResponsePath; of: ResponsePath }[] = [];
  readonly #calls = new Map<string, FieldCall>();

  /**
   * The call an earlier field of this operation made under `identity`; `undefined` when there is
   * none, and `call` is then registered as it. Checked and registered at once, so of two aliases
   * resolved side by side (a query's fields) one is first.
   */
  firstCall(identity: string, call: FieldCall): FieldCall | undefined {
    const first = this.#calls.get(identity);
    if (!first) this.#calls.set(identity, call);
    return first;
  }

  keep(path: ResponsePath, sink: ExecutedResultSink): void {
    this.#kept.push({ path, sink });
  }

  replay(path: ResponsePath, result: ExecutedResult): void {
    this.#replayed.push({ path, result });
  }

  /** `path` answers with what the kept field at `of` executed: one call under two aliases. */
  mirror(path: ResponsePath, of: ResponsePath): void {
    this.#mirrored.push({ path, of });
  }

  /**
   * Waits until every kept result is stored, so a client that got its response is sure a retry
   * gets the same. Incremental delivery (`@defer`, `@stream`) is not read: nothing is kept.
   */
  async settle(body: GraphQLResponseBody): Promise<void> {
    const single = body.kind === 'single' ? body.singleResult : undefined;
    const executed = this.#kept.map(({ path }) => single && executedResultAt(single, path));
    const kept = this.#kept.map(({ sink }, index) => sink(executed[index]));
    const replayed = [...this.#replayed];
    for (const { path, of } of this.#mirrored) {
      const result = executed[this.#kept.findIndex((kept) => samePath(kept.path, of))];
      if (result) replayed.push({ path, result });
    }
    if (single && replayed.length > 0) {
      const { errors: executedErrors = [], ...rest } = single;
      let data = single.data;
      let errors = executedErrors;
      for (const { path, result } of replayed) {
        data = withValueAt(data, path, result.data);
        errors = [
          ...errors.filter((error) => !isUnder(error.path, path)),
          ...result.errors.map((error) => rerooted(error, result.path, path)),
        ];
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

/**
 * The field's data and the errors under it. Its data is missing when an error elsewhere nulled
 * its parent (a non-null sibling failed): nothing of the field reached the client, and keeping
 * a bare `null` would replay a value it never had, so there is no result then.
 */
function executedResultAt(
  single: NonNullable<GraphQLResponseBody['singleResult']>,
  path: ResponsePath,
): ExecutedResult | undefined {
  const data = valueAt(single.data, path);
  const errors = (single.errors ?? []).filter((error) => isUnder(error.path, path));
  if (data === undefined && errors.length === 0) return undefined;
  return asJson({ path, data: data ?? null, errors });
}

/** The error as reported under `to`, the field's path in this response, rather than `from`. */
function rerooted(error: FormattedError, from: ResponsePath, to: ResponsePath): FormattedError {
  if (!error.path || samePath(from, to)) return error;
  return { ...error, path: [...to, ...error.path.slice(from.length)] };
}

function samePath(a: ResponsePath, b: ResponsePath): boolean {
  return a.length === b.length && a.every((key, index) => b[index] === key);
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
