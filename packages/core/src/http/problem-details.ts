import { OncelyError } from '../errors/oncely-error.js';

/** RFC 9457 problem details, as sent with `content-type: application/problem+json`. */
export interface ProblemDetails {
  /** A `ProblemType` URI: what clients switch on. */
  readonly type: string;
  /** Short summary of the case, the same for every occurrence. */
  readonly title: string;
  /** The HTTP status, repeated from the response. */
  readonly status: number;
  /** This occurrence explained, with how to fix it where the client can. */
  readonly detail: string;
  /** Case-specific members (`header`, `field`, `limitBytes`, …): ids and names, never input. */
  readonly [extension: string]: unknown;
}

/** A complete problem response: what an adapter writes, as is. Header names are lower-case. */
export interface ProblemResponse {
  /** The HTTP status code. */
  readonly status: number;
  /** `content-type: application/problem+json`, and `retry-after` when a retry may succeed. */
  readonly headers: Readonly<Record<string, string>>;
  /** The problem document, sent as JSON. */
  readonly body: ProblemDetails;
}

/** The media type of every problem response oncely writes. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Stable `type` URIs, one per case; clients may switch on them. */
export const ProblemType = {
  /** 400: the route requires an idempotency key and the request sent none. */
  idempotencyKeyMissing: 'urn:oncely:problem:idempotency-key-missing',
  /** 400: the idempotency key header is not a valid key. */
  idempotencyKeyMalformed: 'urn:oncely:problem:idempotency-key-malformed',
  /** 400: the body failed validation; `errors` lists the violations. */
  invalidBody: 'urn:oncely:problem:invalid-body',
  /** 400: a field the key needs is missing; `field` names it. */
  missingKeyField: 'urn:oncely:problem:missing-key-field',
  /** 400: a value the key is built from cannot be keyed; `field` and `reason` say why. */
  invalidKeyInput: 'urn:oncely:problem:invalid-key-input',
  /** 401: the key needs `user.*`, there is no principal, and the route says `401`. */
  unauthenticated: 'urn:oncely:problem:unauthenticated',
  /** 409: the same key is still running; `Retry-After` says when its outcome may be ready. */
  requestInFlight: 'urn:oncely:problem:request-in-flight',
  /**
   * 409: the key holds a record of another service; nothing was replayed, overwritten or run.
   * The services are named to operators only (the error, its event and metric), never to clients.
   */
  foreignOwner: 'urn:oncely:problem:foreign-owner',
  /** 422: the idempotency key was used before with a different payload. */
  payloadMismatch: 'urn:oncely:problem:payload-mismatch',
  /** 413: the request body, or the response to keep, is above its limit. */
  payloadTooLarge: 'urn:oncely:problem:payload-too-large',
  /** 503: the SingleFlight coordinator cannot be reached and the route fails closed. */
  coordinatorUnavailable: 'urn:oncely:problem:coordinator-unavailable',
  /** 503: the call lost its lease, or ran past `maxDuration`, before it completed. */
  leaseLost: 'urn:oncely:problem:lease-lost',
  /** 503: the record store cannot be reached; nothing was confirmed, a retry is safe. */
  storeUnavailable: 'urn:oncely:problem:store-unavailable',
  /**
   * 503: an in-memory adapter holds its bound of live entries and takes no new key until some
   * expire; `Retry-After` says when. Nothing was started, a retry is safe.
   */
  capacityExceeded: 'urn:oncely:problem:capacity-exceeded',
  /** 429: the tenant's or user's quota of new records is used up; `limit` says how many. */
  recordQuotaExceeded: 'urn:oncely:problem:record-quota-exceeded',
  /** 500: a stored response failed its integrity check and cannot be replayed. */
  storedDataUnreadable: 'urn:oncely:problem:stored-data-unreadable',
  /** 500: the handler wrote a response oncely cannot keep whole; none was sent or kept. */
  unsupportedResponse: 'urn:oncely:problem:unsupported-response',
  /** 500: the handler ran but its value cannot be kept; retries of the key get this too. */
  unstorableValue: 'urn:oncely:problem:unstorable-value',
  /** 500: a transactional handler wrote beside its transaction; the call was rolled back. */
  writeOutsideTransaction: 'urn:oncely:problem:write-outside-transaction',
  /**
   * 500: the route's key reads the body and no body parser ran before oncely (Express without
   * `express.json()`); nothing was locked, run or kept.
   */
  bodyNotParsed: 'urn:oncely:problem:body-not-parsed',
} as const;

interface ProblemCase {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  /** Sent instead of the error's message when that is meant for operators only. */
  readonly detail?: string;
  readonly retryAfterMs?: number;
  readonly extensions?: Record<string, unknown>;
}

type Fields = Record<string, unknown>;

// Keyed by `OncelyError.code`, so errors of other packages (the key builder, the flight engine,
// the stores) map here without core/http importing their classes. Extensions carry ids and field
// names only, never raw input.
const CASES: Readonly<Record<string, (error: Fields) => ProblemCase>> = {
  idempotency_key_missing: (e) => ({
    type: ProblemType.idempotencyKeyMissing,
    title: 'Idempotency key required',
    status: 400,
    extensions: { header: e.header },
  }),
  idempotency_key_malformed: (e) => ({
    type: ProblemType.idempotencyKeyMalformed,
    title: 'Malformed idempotency key',
    status: 400,
    extensions: { header: e.header },
  }),
  invalid_body: (e) => ({
    type: ProblemType.invalidBody,
    title: 'Invalid request body',
    status: 400,
    extensions: { errors: e.violations },
  }),
  key_field_missing: (e) => ({
    type: ProblemType.missingKeyField,
    title: 'Missing key field',
    status: 400,
    extensions: { field: e.field },
  }),
  key_input_invalid: (e) =>
    e.reason === 'too_large'
      ? {
          type: ProblemType.payloadTooLarge,
          title: 'Request body too large',
          status: 413,
          extensions: { field: e.path },
        }
      : {
          type: ProblemType.invalidKeyInput,
          title: 'Invalid key input',
          status: 400,
          extensions: { field: e.path, reason: e.reason },
        },
  unauthenticated: () => ({
    type: ProblemType.unauthenticated,
    title: 'Authentication required',
    status: 401,
  }),
  idempotency_in_flight: (e) => ({
    type: ProblemType.requestInFlight,
    title: 'Request in flight',
    status: 409,
    retryAfterMs: Number(e.retryAfterMs),
  }),
  flight_busy: (e) => ({
    type: ProblemType.requestInFlight,
    title: 'Request in flight',
    status: 409,
    retryAfterMs: Number(e.leaseRemainingMs),
  }),
  idempotency_mismatch: () => ({
    type: ProblemType.payloadMismatch,
    title: 'Idempotency key reused with a different payload',
    status: 422,
  }),
  // 409 like any other conflict with the key's current state; no Retry-After, since retrying
  // cannot help until one of the services changes its key space. Which services clash, and the
  // fix, are the operators' (the error, its event and metric): a client learns neither.
  foreign_owner: () => ({
    type: ProblemType.foreignOwner,
    title: 'Key owned by another service',
    status: 409,
    detail:
      'This key is already used by another part of the system; nothing was replayed, overwritten or run. A retry gets the same answer until the server is reconfigured.',
  }),
  payload_too_large: (e) => ({
    type: ProblemType.payloadTooLarge,
    title: e.subject === 'response' ? 'Response too large to keep' : 'Request body too large',
    status: 413,
    extensions: { limitBytes: e.limitBytes },
  }),
  result_too_large: (e) => ({
    type: ProblemType.payloadTooLarge,
    title: 'Response too large to keep',
    status: 413,
    extensions: { limitBytes: e.maxBytes },
  }),
  // The backend, its address and the fix are for operators (in the error); clients learn that a
  // retry is safe.
  coordinator_unavailable: () => ({
    type: ProblemType.coordinatorUnavailable,
    title: 'Coordinator unavailable',
    status: 503,
    detail:
      'The server cannot coordinate duplicate requests right now; nothing was run. Retry the request.',
    retryAfterMs: 1000,
  }),
  // Also a handler past its route's maxDuration (`MaxDurationExceededError`), which says so.
  lease_lost: (e) => ({
    type: ProblemType.leaseLost,
    title: 'Lease lost before completion',
    status: 503,
    retryAfterMs: 1000,
    extensions: { maxDurationMs: e.maxDurationMs },
  }),
  // Operators read the cause in their logs; clients only need to know that a retry is safe.
  record_store_unavailable: () => ({
    type: ProblemType.storeUnavailable,
    title: 'Record store unavailable',
    status: 503,
    detail:
      'The idempotency record store is unavailable; nothing was confirmed. Retry the request.',
    retryAfterMs: 1000,
  }),
  // The bound and the adapter are for operators (in the error); clients learn when to retry.
  in_memory_capacity_exceeded: (e) => ({
    type: ProblemType.capacityExceeded,
    title: 'Server at capacity',
    status: 503,
    detail:
      'The server holds as many requests as it can keep track of; nothing was started. Retry later.',
    retryAfterMs: Number(e.retryAfterMs),
  }),
  record_quota_exceeded: (e) => ({
    type: ProblemType.recordQuotaExceeded,
    title: 'Too many new idempotent requests',
    status: 429,
    retryAfterMs: Number(e.retryAfterMs),
    extensions: { limit: e.limit },
  }),
  // The server's own data failed its integrity check: a server error, with no key id or reason.
  sealed_data_unreadable: () => ({
    type: ProblemType.storedDataUnreadable,
    title: 'Stored response unreadable',
    status: 500,
    detail: 'A stored response failed its integrity check and cannot be replayed.',
  }),
  // The handler wrote a response oncely cannot keep whole; the route and cause are for its
  // developers (in the error). Under an idempotency record the refusal itself is kept, with a
  // detail saying so (record-execution.ts).
  unsupported_response: () => ({
    type: ProblemType.unsupportedResponse,
    title: 'Response cannot be kept',
    status: 500,
    detail: 'The response could not be kept for replays, so none was sent.',
  }),
  // A value call's handler ran once and its value could not be kept: its key stays answered by
  // this refusal. The route and the value's type are for its developers, in the error.
  unstorable_value: () => ({
    type: ProblemType.unstorableValue,
    title: 'Result cannot be kept',
    status: 500,
    detail:
      'The request ran once but its result could not be kept; retries of this key get this error.',
  }),
  // A transactional handler wrote beside its transaction (`@oncely/typeorm` refused it and
  // rolled the call back): a server bug whose fix is in the error, for its developers.
  write_outside_transaction: () => ({
    type: ProblemType.writeOutsideTransaction,
    title: 'Write outside the request transaction',
    status: 500,
    detail: 'The request was rolled back and nothing was kept; a retry runs it again.',
  }),
  // A server set-up error no retry can fix: 500, with no Retry-After. Its message names the
  // missing body parser and nothing of the request, so it is the detail: that is where the
  // developer looks first.
  body_not_parsed: () => ({
    type: ProblemType.bodyNotParsed,
    title: 'Request body not parsed',
    status: 500,
  }),
};

/**
 * The one place where oncely errors become HTTP: an RFC 9457 problem response with a stable
 * `type` per case, or `undefined` for anything else (left to the framework's own error handling).
 * `Retry-After` is in whole seconds, rounded up, at least 1.
 */
export function toProblemResponse(error: unknown): ProblemResponse | undefined {
  if (!(error instanceof OncelyError)) return undefined;
  const describe = CASES[error.code];
  if (describe === undefined) return undefined;
  const problem = describe(error as unknown as Fields);
  const headers: Record<string, string> = { 'content-type': PROBLEM_CONTENT_TYPE };
  if (problem.retryAfterMs !== undefined) {
    headers['retry-after'] = String(retryAfterSeconds(problem.retryAfterMs));
  }
  return {
    status: problem.status,
    headers,
    body: {
      type: problem.type,
      title: problem.title,
      status: problem.status,
      detail: problem.detail ?? error.message,
      ...withoutUndefined(problem.extensions),
    },
  };
}

/** Whole seconds for `Retry-After`: rounded up, never 0 (a client would retry at once). */
export function retryAfterSeconds(ms: number): number {
  return Number.isFinite(ms) && ms > 0 ? Math.max(1, Math.ceil(ms / 1000)) : 1;
}

function withoutUndefined(extensions: Record<string, unknown> = {}): Record<string, unknown> {
  return Object.fromEntries(Object.entries(extensions).filter(([, v]) => v !== undefined));
}
