import { canonicalText } from './canonicalize.js';
import { projectionText } from './input-projection.js';
import { resolveKeyPath } from './key-path.js';
import { hashSegment } from './key-segment.js';
import {
  compileKeySpec,
  type CompiledKeyField,
  type CompiledKeySpec,
} from './key-spec.compiler.js';
import { MAX_KEY_LENGTH } from './key.constants.js';
import type { BusinessKey, KeyContext, KeySpec } from './key.types.js';
import { MissingKeyFieldError } from './missing-key-field.error.js';
import { sha256Hex } from './sha256.js';

/**
 * Builds the business key `namespace:operation:version:scope:target:fingerprint` of a request.
 *
 * Scope values are taken exactly and by type (`renderScopeValue`), target values are normalised
 * as text (`segmentText`); each is escaped, hashed when longer than 64 characters, and joined
 * with `,`. A segment with no sources declared is empty. The fingerprint
 * is the SHA-256 of the canonical input (`canonicalKeyInput`), truncated to `fingerprintBits`.
 *
 * @throws KeySpecError if the spec is invalid (checked once per spec object).
 * @throws MissingKeyFieldError if a required scope or target value is absent, null or empty.
 * @throws KeyInputError if a value has no canonical form, or a scope value is a boolean.
 */
export function buildKey(spec: KeySpec, ctx: KeyContext): BusinessKey {
  const compiled = compileKeySpec(spec);
  const scope = renderSegment(compiled, compiled.scope, 'scope', ctx);
  const target = renderSegment(compiled, compiled.target, 'target', ctx);
  const digest = sha256Hex(canonicalInput(compiled, ctx));
  const fingerprint = digest.slice(0, compiled.fingerprintLength);
  const identity = boundedIdentity(compiled.operation, scope, target, fingerprint.length);
  return { key: `${identity}:${fingerprint}`, identity, fingerprint, digest };
}

/**
 * The identities `buildKey(spec, ctx)` would give with each of `versions` in place of the spec's
 * version: how a route with `previousVersions` finds the records its earlier versions wrote for
 * the same request. Versions are names as a spec writes them (checked where they are declared).
 */
export function identitiesUnderVersions(
  spec: KeySpec,
  ctx: KeyContext,
  versions: readonly string[],
): string[] {
  const compiled = compileKeySpec(spec);
  const scope = renderSegment(compiled, compiled.scope, 'scope', ctx);
  const target = renderSegment(compiled, compiled.target, 'target', ctx);
  const family = compiled.operation.slice(0, compiled.operation.lastIndexOf(':') + 1);
  return versions.map((version) =>
    boundedIdentity(family + version, scope, target, compiled.fingerprintLength),
  );
}

/**
 * The exact text `buildKey` hashes into the fingerprint: the context projected onto the spec's
 * input paths, canonicalised. For debugging why two requests differ; it holds raw input, so
 * never log it in production.
 */
export function canonicalKeyInput(spec: KeySpec, ctx: KeyContext): string {
  return canonicalInput(compileKeySpec(spec), ctx);
}

function canonicalInput(spec: CompiledKeySpec, ctx: KeyContext): string {
  return spec.projection
    ? projectionText(spec.projection, ctx)
    : canonicalText(projectInput(spec, ctx), spec.rules);
}

function renderSegment(
  spec: CompiledKeySpec,
  fields: readonly CompiledKeyField[],
  segment: 'scope' | 'target',
  ctx: KeyContext,
): string {
  let rendered = '';
  for (let index = 0; index < fields.length; index++) {
    const field = fields[index] as CompiledKeyField;
    const value = field.render(field.read(ctx), field.field) ?? field.fallback;
    if (value === undefined) {
      throw new MissingKeyFieldError(field.field, segment, spec.operation, field.missing(ctx));
    }
    rendered += (index === 0 ? '' : ',') + value;
  }
  return rendered;
}

/** `{ body: { amount } , query: { from } }` for input `['body.amount', 'query.from']`. */
function projectInput(spec: CompiledKeySpec, ctx: KeyContext): Record<string, unknown> {
  const projection = Object.create(null) as Record<string, unknown>;
  for (const path of spec.input) {
    const value = resolveKeyPath(ctx, path);
    if (value === undefined) {
      continue;
    }
    let parent = projection;
    const last = path.length - 1;
    for (let index = 0; index < last; index++) {
      const segment = path[index] as string;
      parent[segment] ??= Object.create(null);
      parent = parent[segment] as Record<string, unknown>;
    }
    parent[path[last] as string] = value;
  }
  return projection;
}

/** Hashes the longer of scope and target (then the other) until the key fits MAX_KEY_LENGTH. */
function boundedIdentity(
  operation: string,
  scope: string,
  target: string,
  fingerprintLength: number,
): string {
  const fixedLength = operation.length + fingerprintLength + 3;
  if (fixedLength + scope.length + target.length > MAX_KEY_LENGTH) {
    const scopeFirst = scope.length >= target.length;
    if (scopeFirst) {
      scope = hashSegment(scope);
    } else {
      target = hashSegment(target);
    }
    if (fixedLength + scope.length + target.length > MAX_KEY_LENGTH) {
      if (scopeFirst) {
        target = hashSegment(target);
      } else {
        scope = hashSegment(scope);
      }
    }
  }
  return `${operation}:${scope}:${target}`;
}
