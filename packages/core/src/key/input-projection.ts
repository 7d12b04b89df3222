import { NEEDS_CARE, quotePlain, sortByKey } from './canonical-json.js';
import { descendRules, normalizationAt, rulesAtRoot, type RuleNode } from './canonical-rules.js';
import { escapeKey } from './canonical-string.js';
import { Canonicalizer } from './canonicalizer.js';
import { DEFAULT_NORMALIZATION } from './canonicalize.js';
import { resolveKeyPath } from './key-path.js';
import type { KeyContext, StringNormalization } from './key.types.js';

/**
 * One member of the canonical input `{"body":…,"query":{"from":…}}`: a segment of the spec's
 * input paths, with its JSON name written once. A leaf is an input path; an inner member is an
 * object holding whichever of its children are present.
 */
interface ProjectionMember {
  /** `{"segment":` and `,"segment":`, with a leading `$` doubled. */
  readonly first: string;
  readonly later: string;
  /** Indexes of the input paths at or below it: it is written if one of them has a value. */
  readonly leaves: readonly number[];
  /** The members below, in canonical order; empty for a leaf. */
  readonly children: readonly ProjectionMember[];
  /** Leaf only: the input path, the rules at it and the normalisation in force there. */
  readonly path: readonly string[];
  readonly rules: readonly RuleNode[];
  readonly normalization: StringNormalization;
}

/**
 * The canonical input written straight from the context: what `canonicalize` gives for the
 * context projected onto the input paths, without building that projection (objects made
 * property by property, which V8 keeps in its slow dictionary form) and walking it again.
 */
export interface InputProjection {
  /** The input paths, in the spec's order: leaves refer to them by index. */
  readonly input: readonly (readonly string[])[];
  readonly members: readonly ProjectionMember[];
}

/**
 * The projection of these input paths, or `undefined` when a segment needs NFC or escaping:
 * such specs (rare) project the context into an object and canonicalise that, so a duplicate
 * name after NFC is still found in the request's data.
 */
export function compileInputProjection(
  input: readonly (readonly string[])[],
  rules: RuleNode | undefined,
): InputProjection | undefined {
  if (input.some((path) => path.some((segment) => NEEDS_CARE.test(segment)))) {
    return undefined;
  }
  const root = rulesAtRoot(rules);
  const indexed = input.map((path, index) => ({ path, index }));
  return {
    input,
    members: membersAt(indexed, 0, root, normalizationAt(root, DEFAULT_NORMALIZATION)),
  };
}

/** The members at `depth` of the paths that share their first `depth` segments. */
function membersAt(
  paths: readonly { readonly path: readonly string[]; readonly index: number }[],
  depth: number,
  rules: readonly RuleNode[],
  normalization: StringNormalization,
): ProjectionMember[] {
  const segments = [...new Set(paths.map(({ path }) => path[depth] as string))];
  // Plain segments sort like their canonical names (see `record-layout.ts`).
  const order = segments.map((_, index) => index);
  sortByKey(order, segments);
  return order.map((index) => {
    const segment = segments[index] as string;
    const below = paths.filter(({ path }) => path[depth] === segment);
    const memberRules = descendRules(rules, segment);
    const memberNormalization = normalizationAt(memberRules, normalization);
    const leaf = below.find(({ path }) => path.length === depth + 1);
    const name = `${quotePlain(escapeKey(segment))}:`;
    return {
      first: `{${name}`,
      later: `,${name}`,
      leaves: below.map(({ index: leafIndex }) => leafIndex),
      children: leaf ? [] : membersAt(below, depth + 1, memberRules, memberNormalization),
      path: leaf?.path ?? [],
      rules: memberRules,
      normalization: memberNormalization,
    };
  });
}

/** The canonical text of the context projected onto the input paths. */
export function projectionText(projection: InputProjection, ctx: KeyContext): string {
  const values = projection.input.map((path) => resolveKeyPath(ctx, path));
  const canonicalizer = new Canonicalizer();
  writeMembers(projection.members, values, canonicalizer);
  return canonicalizer.finish();
}

/** Writes the members with a value at or below them, as one object (`{}` when none has). */
function writeMembers(
  members: readonly ProjectionMember[],
  values: readonly unknown[],
  canonicalizer: Canonicalizer,
): void {
  let written = false;
  for (const member of members) {
    if (!member.leaves.some((leaf) => values[leaf] !== undefined)) {
      continue;
    }
    canonicalizer.write(written ? member.later : member.first);
    written = true;
    if (member.children.length === 0) {
      const leaf = member.leaves[0] as number;
      canonicalizer.writeMember(values[leaf], member.path, member.rules, member.normalization);
    } else {
      writeMembers(member.children, values, canonicalizer);
    }
  }
  canonicalizer.write(written ? '}' : '{}');
}
