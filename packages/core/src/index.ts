/**
 * `@oncely/core`: business keys, the SingleFlight and idempotency engines (set up by
 * {@link createOncelyEngine}), the in-memory adapters, and the errors oncely raises, each an
 * {@link OncelyError}. Apps usually reach it through `@oncely/nestjs` or `@oncely/express`;
 * what only adapters and framework integrations need is in `@oncely/core/adapter`, the
 * contract suites in `@oncely/core/testing`.
 *
 * @packageDocumentation
 * @module @oncely/core
 */

// Set-up

/** Builds the engines from options, checks them with one error type, and owns what it closes. */
export { createOncelyEngine } from './engine/oncely-engine.js';
export type { OncelyEngine, ProtectedRouteDeclaration } from './engine/oncely-engine.js';
export type { OncelyEngineOptions } from './engine/oncely-engine.options.js';
/** Where the start-up's lines and oncely's warnings go (the `logger` option). */
export type { OncelyLogger } from './engine/oncely-logger.js';
export type { SecurityOptions } from './engine/secure-engines.js';
export type { EncryptedRecordStoreOptions } from './security/encrypted-idempotency-record.store.js';
export type { EncryptionKey, EncryptionOptions } from './security/encryption-keyring.js';
export type { RecordQuotaOptions } from './security/quota-limited-idempotency-record.store.js';
export type {
  IdempotencyKeyMode,
  IdempotentRouteOptions,
  ProtectionDefaults,
  SingleFlightRouteOptions,
} from './call/route-options.js';
export type { HandlerContext } from './call/protected-call.types.js';
/** Every operation the app's routes claim, as the engine's `registry` lists them. */
export type { OperationClaim, OperationRegistry } from './call/operation-registry.js';
/** One claim as the service's registry file lists it (`oncely registry export`). */
export type { RegistryClaim } from './registry/registry-claim.js';
/** How the app's claims are registered where its records go (the `claims` option). */
export {
  DEFAULT_CLAIM_RENEW_MS,
  DEFAULT_CLAIM_TTL_MS,
  type ClaimOptions,
} from './engine/claim-setup.js';
export type { OnForeignClaim } from './registry/claim-heartbeat.js';

// Embedded default: one process, nothing to install

/** SingleFlight leases for one process; the default coordinator. */
export { InMemoryFlightCoordinator } from './flight/in-memory-flight-coordinator.js';
export type { InMemoryFlightCoordinatorOptions } from './flight/in-memory-flight-coordinator.js';
/** Idempotency records for one process; the default store. */
export { InMemoryIdempotencyRecordStore } from './record/in-memory-idempotency-record.store.js';
export type { InMemoryIdempotencyRecordStoreOptions } from './record/in-memory-idempotency-record.store.js';
/** Counts new records per tenant for `recordQuota` in one process. */
export { InMemoryRecordQuota } from './security/in-memory-record.quota.js';
export type { InMemoryRecordQuotaOptions } from './security/in-memory-record.quota.js';

// Ports: what a coordinator, a store or a quota implements

export type {
  ClaimAnnouncement,
  ClaimCheck,
  ClaimConflict,
  ClaimedOperation,
  ClaimRegistry,
  ClaimRegistrySource,
} from './registry/claim-registry.port.js';
/** Claims of the engines of one process, e.g. for tests. */
export { InMemoryClaimRegistry } from './registry/in-memory-claim.registry.js';

export type {
  AcquireOutcome,
  HeldOutcome,
  FlightCoordinator,
  FlightOutcome,
} from './flight/flight-coordinator.port.js';
export type { FlightLeaseAdmin } from './flight/flight-lease-admin.port.js';
export type {
  FlightEntry,
  FlightInspection,
  FlightInspectionAdmin,
} from './flight/flight-inspection-admin.port.js';
export type {
  BeginOptions,
  BeginOutcome,
  IdempotencyRecordStore,
  RecordLease,
} from './record/idempotency-record-store.port.js';
export type {
  TransactionalCompletion,
  TransactionalIdempotencyRecordStore,
} from './record/transactional-idempotency-record-store.port.js';
export type { StoredBody, StoredResponse } from './record/stored-response.js';
/** What a coordinator or store tells the start-up: what it works on, and whether it answers. */
export type { BackendReport } from './engine/backend-report.port.js';
export type { QuotaDecision, RecordQuota } from './security/record-quota.port.js';
export type {
  ForceReleaseOutcome,
  IdempotencyRecordAdmin,
  RecordInspection,
} from './record/idempotency-record-admin.port.js';
export type {
  IdempotencyRecordListing,
  RecordSummary,
} from './record/idempotency-record-listing.port.js';

// Operators and observability

/** Inspect, force-release and purge records by key, for runbooks and support tools. */
export { OncelyAdmin } from './security/oncely-admin.js';
export type {
  KeyReleaseOutcome,
  OncelyAdminOptions,
  PurgeOutcome,
} from './security/oncely-admin.js';
/** Counts every decision (executed, replayed, joined, …) in a `prom-client` registry. */
export { createPrometheusListener } from './metrics/prometheus-event.listener.js';
export type {
  PrometheusClient,
  PrometheusListenerOptions,
} from './metrics/prometheus-event.listener.js';
export type { OncelyEvent, OncelyEventListener, OncelyOutcome } from './events/oncely-event.js';
/** One span per protected call, through OpenTelemetry's API (found by itself when installed). */
export { createOpenTelemetryTracer } from './tracing/open-telemetry-call.tracer.js';
export type {
  OpenTelemetryApi,
  OpenTelemetrySpan,
  OpenTelemetryTracer,
  OpenTelemetryTracerOptions,
  OpenTelemetryTracerProvider,
} from './tracing/open-telemetry-call.tracer.js';
/** What another tracer implements for the `tracing` option; the attribute names of a call's span. */
export type { CallSpan, CallTracer } from './tracing/call-tracer.port.js';
export { CALL_SPAN_ATTRIBUTES } from './call/call-trace.js';

// Business keys

/** `namespace:operation:version:scope:target:fingerprint` from a key spec and a request. */
export { buildKey, canonicalKeyInput } from './key/build-key.js';
/** The canonical JSON a fingerprint hashes (RFC 8785 with oncely's string and number rules). */
export { canonicalize } from './key/canonicalize.js';
/** Marks a DTO property that never enters the fingerprint (a comment, a client timestamp). */
export { KeyIgnore } from './key/key-ignore.decorator.js';
/** Checks a key spec once, at start-up, naming the bad field. */
export { validateKeySpec } from './key/key-spec.compiler.js';
/** What a business key looks like, for logs and operator tools. */
export { BUSINESS_KEY_PATTERN } from './key/key-grammar.js';
export type * from './key/key.types.js';

// SingleFlight without a framework

/** Runs concurrent duplicates once across every node sharing the coordinator. */
export { SingleFlight } from './flight/single-flight.js';
export type { SingleFlightOptions } from './flight/single-flight-options.js';
export type {
  FailurePolicy,
  FlightContext,
  FlightOptions,
  FlightResult,
  FlightRunOptions,
  FlightSource,
  FlightWork,
} from './flight/flight.types.js';

// HTTP semantics

/** Every problem `type` oncely answers with, and its status. */
export { PROBLEM_CONTENT_TYPE, ProblemType } from './http/problem-details.js';
/** The RFC 9457 problem response for an oncely error, for catch-all exception filters. */
export { toProblemResponse } from './http/problem-details.js';
export type { ProblemDetails, ProblemResponse } from './http/problem-details.js';
export { DEFAULT_IDEMPOTENCY_KEY_HEADER } from './http/idempotency-key-header.js';
/** `Idempotent-Replayed: true` marks a replayed response. */
export { REPLAYED_HEADER } from './call/kept-response.js';

// Errors: every one an `OncelyError` with a stable `code`

export { OncelyError } from './errors/oncely-error.js';
/** Start-up errors; the subclasses below it name the option and the fix. */
export { OncelyConfigurationError } from './errors/oncely-configuration.error.js';
export { KeySpecError } from './key/key-spec.error.js';
export {
  OperationClaimConflictError,
  PreviousVersionClaimedError,
  RouteOptionsError,
  TransactionalStoreRequiredError,
} from './call/route-setup.errors.js';
export { InvalidFlightOptionError } from './flight/invalid-flight-option.error.js';
export { InvalidRecordOptionError } from './record/invalid-record-option.error.js';
export { ReplayHeaderPolicyError } from './http/replay-header-policy.error.js';
export { OpenTelemetryLoadError } from './tracing/open-telemetry-load.error.js';
/** Requests oncely refuses before taking any lock (4xx). */
export { MissingKeyFieldError, type MissingKeyFieldKind } from './key/missing-key-field.error.js';
export { KeyInputError, type KeyInputErrorReason } from './key/key-input.error.js';
export {
  IdempotencyKeyMalformedError,
  IdempotencyKeyMissingError,
} from './http/idempotency-key.errors.js';
export {
  InvalidBodyError,
  PayloadTooLargeError,
  UnauthenticatedError,
  type BodyViolation,
} from './http/request-rejected.errors.js';
export { RecordQuotaExceededError } from './security/record-quota-exceeded.error.js';
/** The key reads a body (or uploaded files) not parsed when it was built: a set-up error (500). */
export { BodyNotParsedError, type BodyNotParsedReason } from './http/body-not-parsed.error.js';
/** Duplicates: in flight (409), or the key reused with another payload (422). */
export {
  IdempotencyConflictError,
  IdempotencyMismatchError,
} from './call/idempotency-conflict.errors.js';
/** The key met a record of another service (409): neither replayed nor overwritten. */
export { ForeignOwnerError } from './errors/foreign-owner.error.js';
/** At start-up, another service holds a live claim on one of the app's operations. */
export { ForeignClaimError } from './registry/foreign-claim.error.js';
export { FlightBusyError } from './flight/flight-busy.error.js';
export { SharedFlightError } from './flight/shared-flight.error.js';
/** A run that lost its lease, or ran past `maxDuration`. */
export { LeaseLostError, type LeaseLossReason } from './errors/lease-lost.error.js';
export { MaxDurationExceededError } from './flight/max-duration-exceeded.error.js';
/** Results and responses oncely refuses to keep rather than change. */
export { ResultNotSerializableError } from './flight/result-not-serializable.error.js';
export { ResultTooLargeError } from './flight/result-too-large.error.js';
export { UnstorableResponseError } from './record/unstorable-response.error.js';
export { UnsupportedResponseError } from './http/unsupported-response.error.js';
export { UnstorableValueError } from './call/unstorable-value.error.js';
/** A backend that cannot be reached or is full, or data at rest that cannot be opened. */
export { CoordinatorUnavailableError } from './flight/flight-coordinator.port.js';
export { RecordStoreUnavailableError } from './record/record-store-unavailable.error.js';
export { InMemoryCapacityError } from './errors/in-memory-capacity.error.js';
export { SealedDataError, type SealedDataFailure } from './security/sealed-data.error.js';
