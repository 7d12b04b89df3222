import { buildKey, identitiesUnderVersions } from '../key/build-key.js';
import { MissingKeyFieldError } from '../key/missing-key-field.error.js';
import type { BusinessKey, KeyContext, KeySpec } from '../key/key.types.js';
import { parseIdempotencyKeyHeader } from '../http/idempotency-key-header.js';
import {
  IdempotencyKeyMalformedError,
  IdempotencyKeyMissingError,
} from '../http/idempotency-key.errors.js';
import type { ProtectedRoute, ResolvedIdempotentRoute } from './protected-route.js';
import { CLIENT_IDEMPOTENCY_KEY, type CallKeyContext } from './route-key-spec.js';
import { UnauthenticatedError } from '../http/request-rejected.errors.js';

/** The keys one request is protected by. */
export interface CallKeys {
  /** The durable record's identity (the client key joined to its target) and input digest. */
  readonly idempotency?: BusinessKey;
  /**
   * The same request's identities under the route's `previousVersions`, newest first: the records
   * that answer when `idempotency.identity` has none. Absent when the route lists none.
   */
  readonly previousIdentities?: readonly string[];
  /** The SingleFlight key. */
  readonly singleFlight?: BusinessKey;
}

/**
 * Builds a request's keys from its context (`body` being the validated DTO): reads the client's
 * `Idempotency-Key` as the route says (`required` → 400 when absent, malformed → 400 always),
 * joins it to the identity's target, combined with the scope. Throws the typed errors the
 * problem mapping knows: nothing is locked or recorded before this succeeds.
 */
export function resolveCallKeys(route: ProtectedRoute, ctx: KeyContext): CallKeys {
  const keys: {
    idempotency?: BusinessKey;
    previousIdentities?: readonly string[];
    singleFlight?: BusinessKey;
  } = {};
  if (route.idempotent) {
    const idempotent = route.idempotent;
    const { spec, context } = identitySource(idempotent, ctx);
    keys.idempotency = build(spec, context, idempotent.missingUserStatus);
    if (idempotent.previousVersions.length > 0) {
      keys.previousIdentities = identitiesUnderVersions(spec, context, idempotent.previousVersions);
    }
  }
  const singleFlight = route.singleFlight;
  if (singleFlight) {
    keys.singleFlight = build(singleFlight.spec, ctx, singleFlight.missingUserStatus);
  }
  return keys;
}

/** The spec and context the identity is built from: the client key joins the target when sent. */
function identitySource(
  route: ResolvedIdempotentRoute,
  ctx: KeyContext,
): { spec: KeySpec; context: KeyContext } {
  if (route.idempotencyKey === 'ignored') return { spec: route.spec, context: ctx };
  const parsed = parseIdempotencyKeyHeader(headerOf(ctx.headers, route.header));
  switch (parsed.kind) {
    case 'malformed':
      throw new IdempotencyKeyMalformedError(route.header, parsed.reason);
    case 'absent':
      if (route.idempotencyKey === 'required') throw new IdempotencyKeyMissingError(route.header);
      return { spec: route.spec, context: ctx };
    case 'valid':
      return { spec: route.specWithClientKey, context: withClientKey(ctx, parsed.value) };
  }
}

/** Every property of `T`, optional ones included: a new `KeyContext` field fails to compile here. */
type EveryField<T> = { readonly [K in keyof Required<T>]: T[K] };

/**
 * The context with the client key beside it. Written out rather than spread: V8 builds a spread
 * followed by one more property through its slow path, some forty times slower, on every call.
 */
function withClientKey(ctx: KeyContext, clientKey: string): CallKeyContext {
  return {
    body: ctx.body,
    params: ctx.params,
    query: ctx.query,
    headers: ctx.headers,
    user: ctx.user,
    args: ctx.args,
    files: ctx.files,
    [CLIENT_IDEMPOTENCY_KEY]: clientKey,
  } satisfies EveryField<KeyContext> & CallKeyContext;
}

function build(spec: KeySpec, ctx: KeyContext, missingUserStatus: 400 | 401): BusinessKey {
  try {
    return buildKey(spec, ctx);
  } catch (error) {
    if (
      missingUserStatus === 401 &&
      error instanceof MissingKeyFieldError &&
      (error.missing === 'principal' || error.missing === 'principal_field')
    ) {
      throw new UnauthenticatedError(error.field, { cause: error });
    }
    throw error;
  }
}

function headerOf(headers: unknown, name: string): string | readonly string[] | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const value = (headers as Record<string, unknown>)[name];
  if (typeof value === 'string' || Array.isArray(value)) return value as string | string[];
  return undefined;
}
