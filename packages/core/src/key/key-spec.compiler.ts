import { compileCanonicalRules, WILDCARD, type RuleNode } from './canonical-rules.js';
import { compileInputProjection, type InputProjection } from './input-projection.js';
import { KEY_NAME_PATTERN } from './key-grammar.js';
import { parseKeyPath, resolveKeyPath } from './key-path.js';
import { renderScopeValue, renderTargetValue } from './key-segment.js';
import { KeySpecError } from './key-spec.error.js';
import {
  DEFAULT_FINGERPRINT_BITS,
  DEFAULT_KEY_VERSION,
  MAX_FINGERPRINT_BITS,
  MAX_KEY_NAME_LENGTH,
  MIN_FINGERPRINT_BITS,
} from './key.constants.js';
import type { KeyContext, KeyFieldSource, KeySpec } from './key.types.js';
import { isPrincipalPath, type MissingKeyFieldKind } from './missing-key-field.error.js';

/** One scope or target value, ready to read. */
export interface CompiledKeyField {
  /** How errors name it: the path, or the function's name. */
  readonly field: string;
  readonly read: (ctx: KeyContext) => unknown;
  /** The segment's rule: the rendered value, or `undefined` when the value is missing. */
  readonly render: SegmentRenderer;
  /** Rendered value of the declared default; `undefined` for a required field. */
  readonly fallback: string | undefined;
  /** What a missing value is: of the request, of its principal, or computed by a function. */
  readonly missing: (ctx: KeyContext) => MissingKeyFieldKind;
}

type SegmentRenderer = (value: unknown, field: string) => string | undefined;

/** Scope values are identities (exact, by type); target values are compared as text. */
const SEGMENT_RENDERERS: Readonly<Record<'scope' | 'target', SegmentRenderer>> = {
  scope: renderScopeValue,
  target: renderTargetValue,
};

/** A validated spec with everything per-request work needs precomputed. */
export interface CompiledKeySpec {
  /** `namespace:operation:version`: the first three key segments. */
  readonly operation: string;
  readonly scope: readonly CompiledKeyField[];
  readonly target: readonly CompiledKeyField[];
  /** Segments of each input path; the canonical input projects the context onto them. */
  readonly input: readonly (readonly string[])[];
  readonly rules: RuleNode | undefined;
  /** The input written straight from the context; `undefined`: project, then canonicalise. */
  readonly projection: InputProjection | undefined;
  /** Hex characters of the digest kept as fingerprint. */
  readonly fingerprintLength: number;
}

/** Every property a key spec may have; route options carry them too. */
export const KEY_SPEC_PROPERTIES = [
  'namespace',
  'operation',
  'version',
  'scope',
  'target',
  'input',
  'fingerprintBits',
  'normalize',
  'unordered',
] as const;
const SPEC_PROPERTIES: ReadonlySet<string> = new Set(KEY_SPEC_PROPERTIES);
const FIELD_PROPERTIES: ReadonlySet<string> = new Set(['path', 'optional', 'default']);
const DEFAULT_INPUT: readonly (readonly string[])[] = [['body'], ['files']];

const compiled = new WeakMap<KeySpec, CompiledKeySpec>();

/**
 * Checks a key spec and throws `KeySpecError` naming the first problem. Call it where a spec is
 * declared (a decorator, a module option) so a bad spec fails at start-up, not per request.
 * Results are cached per spec object.
 */
export function validateKeySpec(spec: KeySpec): void {
  compileKeySpec(spec);
}

export function compileKeySpec(spec: KeySpec): CompiledKeySpec {
  let result = compiled.get(spec);
  if (!result) {
    result = new KeySpecCompiler(spec).compile();
    compiled.set(spec, result);
  }
  return result;
}

class KeySpecCompiler {
  private readonly label: string;

  constructor(private readonly spec: KeySpec) {
    const { namespace, operation } = (spec ?? {}) as Partial<KeySpec>;
    this.label = `${typeof namespace === 'string' ? namespace : '?'}:${typeof operation === 'string' ? operation : '?'}`;
  }

  compile(): CompiledKeySpec {
    const spec = this.spec as unknown;
    if (spec === null || typeof spec !== 'object') {
      throw this.error('(spec)', 'must be an object such as { namespace, operation }.');
    }
    for (const property of Object.keys(spec)) {
      if (!SPEC_PROPERTIES.has(property)) {
        throw this.error(
          property,
          `is not a key spec property; use ${[...SPEC_PROPERTIES].join(', ')}.`,
        );
      }
    }
    const namespace = this.name('namespace', this.spec.namespace, 'shop');
    const operation = this.name('operation', this.spec.operation, 'order-create');
    const version =
      this.spec.version === undefined
        ? DEFAULT_KEY_VERSION
        : this.name('version', this.spec.version, 'v2');
    const input = this.input();
    const rules = this.rules(input);
    return {
      operation: `${namespace}:${operation}:${version}`,
      scope: this.fields('scope', this.spec.scope),
      target: this.fields('target', this.spec.target),
      input,
      rules,
      projection: compileInputProjection(input, rules),
      fingerprintLength: this.fingerprintBits() / 4,
    };
  }

  private name(field: string, value: unknown, example: string): string {
    if (value === undefined || value === '') {
      throw this.error(field, `is required: name it with a short token such as '${example}'.`);
    }
    if (typeof value !== 'string' || !KEY_NAME_PATTERN.test(value)) {
      throw this.error(
        field,
        `must be 1 to ${MAX_KEY_NAME_LENGTH} characters of [A-Za-z0-9._~-] starting with a letter or digit, such as '${example}'.`,
      );
    }
    return value;
  }

  private fingerprintBits(): number {
    const bits: unknown = this.spec.fingerprintBits ?? DEFAULT_FINGERPRINT_BITS;
    if (
      typeof bits !== 'number' ||
      !Number.isInteger(bits) ||
      bits % 4 !== 0 ||
      bits < MIN_FINGERPRINT_BITS ||
      bits > MAX_FINGERPRINT_BITS
    ) {
      throw this.error(
        'fingerprintBits',
        `must be a multiple of 4 from ${MIN_FINGERPRINT_BITS} to ${MAX_FINGERPRINT_BITS} (default ${DEFAULT_FINGERPRINT_BITS}); got ${String(bits)}.`,
      );
    }
    return bits;
  }

  private fields(segment: 'scope' | 'target', sources: unknown): CompiledKeyField[] {
    if (sources === undefined) {
      return [];
    }
    const list: readonly unknown[] = Array.isArray(sources) ? sources : [sources];
    const render = SEGMENT_RENDERERS[segment];
    return list.map((source, index) => this.field(`${segment}[${index}]`, source, render));
  }

  private field(where: string, source: unknown, render: SegmentRenderer): CompiledKeyField {
    if (typeof source === 'function') {
      const read = source as Extract<KeyFieldSource, (ctx: KeyContext) => unknown>;
      const field = read.name ? `${read.name}()` : `${where}()`;
      return { field, read, render, fallback: undefined, missing: () => 'computed' };
    }
    if (typeof source === 'string') {
      return this.pathField(where, source, render, undefined);
    }
    if (source === null || typeof source !== 'object') {
      throw this.error(
        where,
        `must be a path such as 'user.tenantId', { path, optional: true, default }, or a function of the context.`,
      );
    }
    for (const property of Object.keys(source)) {
      if (!FIELD_PROPERTIES.has(property)) {
        throw this.error(
          `${where}.${property}`,
          'is not a field option; use path, optional and default.',
        );
      }
    }
    const { path, optional, default: fallback } = source as Record<string, unknown>;
    if (optional !== undefined && typeof optional !== 'boolean') {
      throw this.error(`${where}.optional`, 'must be true or false.');
    }
    if (!optional) {
      if (fallback !== undefined) {
        throw this.error(
          `${where}.default`,
          'is only used by optional fields; add optional: true, or remove the default.',
        );
      }
      return this.pathField(where, path, render, undefined);
    }
    if (fallback === undefined) {
      throw this.error(
        `${where}.default`,
        'is required when optional is true: state the value a missing field stands for, so a missing value never silently merges requests.',
      );
    }
    let rendered: string | undefined;
    try {
      rendered = render(fallback, `${where}.default`);
    } catch {
      rendered = undefined;
    }
    if (rendered === undefined) {
      throw this.error(
        `${where}.default`,
        'must be a non-empty string, a finite number, a bigint, a valid Date, or (target only) a boolean.',
      );
    }
    return this.pathField(where, path, render, rendered);
  }

  private pathField(
    where: string,
    path: unknown,
    render: SegmentRenderer,
    fallback: string | undefined,
  ): CompiledKeyField {
    const segments = this.path(`${where}`, path, false);
    const read = (ctx: KeyContext) => resolveKeyPath(ctx, segments);
    return { field: path as string, read, render, fallback, missing: missingOf(path as string) };
  }

  private input(): readonly (readonly string[])[] {
    const declared: unknown = this.spec.input;
    if (declared === undefined) {
      return DEFAULT_INPUT;
    }
    const list: readonly unknown[] = Array.isArray(declared) ? declared : [declared];
    const paths = list.map((path, index) => this.path(`input[${index}]`, path, false));
    paths.forEach((path, index) => {
      const overlapping = paths.findIndex((other, otherIndex) => {
        return otherIndex !== index && isPrefix(other, path);
      });
      if (overlapping !== -1) {
        throw this.error(
          `input[${index}]`,
          `'${path.join('.')}' lies within input[${overlapping}] '${paths[overlapping]?.join('.')}'; list each value once.`,
        );
      }
    });
    return paths;
  }

  private rules(input: readonly (readonly string[])[]): RuleNode | undefined {
    const normalize: unknown = this.spec.normalize;
    const unordered: unknown = this.spec.unordered;
    if (normalize !== undefined && (normalize === null || typeof normalize !== 'object')) {
      throw this.error('normalize', `must map context paths to 'exact', 'trim' or a function.`);
    }
    if (unordered !== undefined && !Array.isArray(unordered)) {
      throw this.error('unordered', `must be an array of context paths such as 'body.tags'.`);
    }
    for (const [path, rule] of Object.entries(normalize ?? {})) {
      if (rule !== 'exact' && rule !== 'trim' && typeof rule !== 'function') {
        throw this.error(`normalize['${path}']`, `must be 'exact', 'trim' or a function.`);
      }
      this.rulePath(`normalize['${path}']`, path, input);
    }
    (unordered ?? []).forEach((path: unknown, index: number) => {
      this.rulePath(`unordered[${index}]`, path, input);
    });
    return compileCanonicalRules(
      { normalize: this.spec.normalize, unordered: this.spec.unordered },
      (path) => path.split('.'),
    );
  }

  private rulePath(where: string, path: unknown, input: readonly (readonly string[])[]): void {
    const segments = this.path(where, path, true);
    if (!input.some((inputPath) => rulePathMeets(segments, inputPath))) {
      throw this.error(
        where,
        `'${String(path)}' is outside the input (${input.map((p) => p.join('.')).join(', ')}); rule paths are context paths such as 'body.note'.`,
      );
    }
  }

  private path(where: string, path: unknown, allowWildcard: boolean): readonly string[] {
    const parsed = parseKeyPath(path, allowWildcard);
    if ('problem' in parsed) {
      throw this.error(where, parsed.problem);
    }
    return parsed.segments;
  }

  private error(field: string, problem: string): KeySpecError {
    return new KeySpecError(this.label, field, problem);
  }
}

function isPrefix(prefix: readonly string[], path: readonly string[]): boolean {
  return prefix.length <= path.length && prefix.every((segment, index) => path[index] === segment);
}

/** A rule path reaches into an input path if one is a prefix of the other, `*` matching any. */
function rulePathMeets(rule: readonly string[], input: readonly string[]): boolean {
  const shared = Math.min(rule.length, input.length);
  for (let index = 0; index < shared; index++) {
    if (rule[index] !== WILDCARD && rule[index] !== input[index]) {
      return false;
    }
  }
  return true;
}

/** What a missing value of `path` is: a principal field, the principal, or a request field. */
function missingOf(path: string): CompiledKeyField['missing'] {
  if (!isPrincipalPath(path)) return () => 'request_field';
  return (ctx) => (ctx.user === undefined || ctx.user === null ? 'principal' : 'principal_field');
}
