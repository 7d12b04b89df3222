/**
 * `@oncely/core/adapter`: what a store, a coordinator or a framework integration is built from.
 * Apps do not need it; `@oncely/core` is their entry.
 *
 * @packageDocumentation
 * @module @oncely/core/adapter
 */

// The protected-call pipeline a framework drives

/** Runs one protected call (HTTP response or plain value) through the route's mechanisms. */
export { ProtectedCallExecutor } from './call/protected-call.executor.js';
export type {
  FlightRunner,
  ProtectedCall,
  ProtectedCallEngines,
  ProtectedCallResult,
} from './call/protected-call.types.js';
export type { ValueCall, ValueCallResult } from './call/value-call.js';
export type { ValueFidelity } from './flight/value-tree.js';
/** Checks a route's options once and compiles its key specs. */
export { checkRouteOptions, defineProtectedRoute } from './call/protected-route.js';
export type {
  ProtectedRoute,
  ResolvedIdempotentRoute,
  ResolvedSingleFlightRoute,
} from './call/protected-route.js';
export { DEFAULT_PROTECTION, type RouteKeySpec } from './call/route-options.js';
/** The business keys and the client's `Idempotency-Key` of one request. */
export { resolveCallKeys, type CallKeys } from './call/call-keys.js';
/**
 * The keys of one HTTP request: a body nothing parsed refused, the body validated, uploaded
 * files (multer's shapes) keyed by their digests.
 */
export { httpCallKeys, type HttpKeyHooks, type HttpKeyRequest } from './call/http-call-keys.js';
/** The context a handler receives when it runs outside the pipeline (no record, no flight). */
export { handlerContext } from './call/handler-context.js';
/** A handler's returned value as a kept body (JSON, bytes or nothing), or a refusal. */
export { storedBodyOf } from './http/stored-body.js';
/** The engines without `createOncelyEngine`'s ownership, for adapters' own tests and tools. */
export { createProtectionEngines } from './engine/protection-engines.js';
export type { ProtectionEnginesOptions } from './engine/protection-engines.js';
/**
 * An app's routes and their claims without engines: what a framework defines its routes on, and
 * what a tool listing claims builds so that it connects to nothing.
 */
export { DeclaredRoutes, type DeclaredRoutesOptions } from './engine/declared-routes.js';
/** What a claim registry compares: a claim's operation, its slot, and who conflicts with it. */
export {
  claimCheckOf,
  claimSlot,
  claimedOperation,
  isForeignClaim,
} from './registry/claim-registry.port.js';
/**
 * Checks of an integration's own options, in the wording of every other option error; its
 * unknown options are refused against the engine's names plus its own.
 */
export {
  positiveIntegerOption,
  refuseUnknownOptions,
  requireFunction,
} from './engine/option-checks.js';
/**
 * Runs an integration's own option checks so that a refusal closes the coordinator and store the
 * options hand over, as `createOncelyEngine` does for its own.
 */
export { closeGivenAdaptersOnError } from './engine/given-adapters.js';
export { ENGINE_OPTION_NAMES } from './engine/oncely-engine.options.js';

// HTTP responses

/** Holds a Node `ServerResponse` whole (chunks, streams, files) until the call decides. */
export { ResponseCapture, type ResponseCaptureOptions } from './http/response-capture.js';
/** Writes oncely's answer (replay, shared result, problem) by the one rule of docs/http.md. */
export {
  expressFreshness,
  writeHttpResponse,
  type FreshnessCheck,
} from './http/response-writer.js';
/** Has the platform's next send write a replay or a shared result (Fastify, Express). */
export { answerAtNextSend } from './http/answer-at-next-send.js';
export type { HttpResponse } from './http/http-response.js';
/** What the app's outer layers are handed for a kept body that answers in their place. */
export { replayedBodyValue } from './http/answer-body.js';
/** Shares a leader's HTTP failure with its followers when its status says it would repeat. */
export {
  HttpStatusFailurePolicy,
  type SerializedFlightError,
} from './http/http-status-failure.policy.js';
/** The response headers a route replays (a resolved route's `replayHeaders`). */
export type { ReplayHeaderPolicy } from './http/replay-header-policy.js';
/** How deep a key input may nest: a framework validating bodies refuses deeper ones the same. */
export { MAX_INPUT_DEPTH } from './key/key.constants.js';

// What a store or a coordinator needs

/** One stored response as columns or hash fields, and back. */
export {
  decodeStoredResponse,
  encodeStoredResponse,
  type EncodedResponse,
} from './record/stored-response.codec.js';
/** A record held in this process decoded once for every `peekReplay` of it. */
export { sharedReplayOf } from './record/stored-response.codec.js';
/** How caches bounded by `maxBytes` count an entry's bytes, from the data they already hold. */
export { ENTRY_OVERHEAD_BYTES, textBytes } from './memory/held-bytes.js';
export { encodedResponseBytes } from './record/stored-response.codec.js';
/** The fixed-length hash a store indexes a record's identity by. */
export { recordKeyHash } from './record/record-key-hash.js';
/** The owner of a record that a `begin` must not replay nor overwrite, if it has one. */
export { foreignOwnerOf } from './record/foreign-owner-of.js';
export { isTransactionalRecordStore } from './record/transactional-idempotency-record-store.port.js';
export { positiveWholeNumber } from './record/invalid-record-option.error.js';
export { systemClock, type Clock } from './time/clock.js';
/** The wrappers `createOncelyEngine` applies for `encryption` and `recordQuota`. */
export { EncryptedFlightCoordinator } from './security/encrypted-flight.coordinator.js';
export { EncryptedIdempotencyRecordStore } from './security/encrypted-idempotency-record.store.js';
export { QuotaLimitedIdempotencyRecordStore } from './security/quota-limited-idempotency-record.store.js';
