import { buildKey } from '../key/index.js';
import { MissingKeyFieldError } from '../key/missing-key-field.error.js';
import type { BusinessKey, KeyContext, KeySpec } from '../key/key.types.js';
import { parseIdempotencyKeyHeader } from './idempotency-key-header.js';
import {
  IdempotencyKeyMalformedError,
  IdempotencyKeyMissingError,
} from './idempotency-key.errors.js';
import {
  CLIENT_IDEMPOTENCY_KEY,
  type CallKeyContext,
  type ProtectedRoute,
} from './protected-route.js';
import { UnauthenticatedError } from './request-rejected.errors.js';

/** The keys one request is protected by. */
export interface CallKeys {
  /** The durable record's identity (the client key joined to its target) and input digest. */
  readonly idempotency?: BusinessKey;
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
  const idempotent = route.idempotent;
  let keyContext: CallKeyContext = ctx;
  let identitySpec = idempotent?.spec;
  if (idempotent && idempotent.idempotencyKey !== 'ignored') {
    const raw = headerOf(ctx.headers, idempotent.header);
    const parsed = parseIdempotencyKeyHeader(raw);
    if (parsed.kind === 'malformed') {
      throw new IdempotencyKeyMalformedError(idempotent.header, parsed.reason);
    }
    if (parsed.kind === 'absent' && idempotent.idempotencyKey === 'required') {
      throw new IdempotencyKeyMissingError(idempotent.header);
    }
    if (parsed.kind === 'valid') {
      keyContext = { ...ctx, [CLIENT_IDEMPOTENCY_KEY]: parsed.value };
      identitySpec = idempotent.specWithClientKey;
    }
  }
  return {
    ...(idempotent &&
      identitySpec && {
        idempotency: build(identitySpec, keyContext, idempotent.missingUserStatus),
      }),
    ...(route.singleFlight && {
      singleFlight: build(route.singleFlight.spec, ctx, route.singleFlight.missingUserStatus),
    }),
  };
}

function build(spec: KeySpec, ctx: KeyContext, missingUserStatus: 400 | 401): BusinessKey {
  try {
    return buildKey(spec, ctx);
  } catch (error) {
    if (
      missingUserStatus === 401 &&
      error instanceof MissingKeyFieldError &&
      (error.field === 'user' || error.field.startsWith('user.'))
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
