import type { CanonicalizeOptions, StringNormalization } from './key.types.js';

/** One step of the rule tree: what applies at a path, and the paths below it. */
export interface RuleNode {
  normalization?: StringNormalization;
  unordered: boolean;
  readonly children: Map<string, RuleNode>;
}

export const WILDCARD = '*';

/** Rules compiled into a tree keyed by path segment, `*` being a child like any other. */
export function compileCanonicalRules(
  options: CanonicalizeOptions | undefined,
  pathSegments: (path: string) => readonly string[],
): RuleNode | undefined {
  const normalize = options?.normalize ?? {};
  const unordered = options?.unordered ?? [];
  const paths = Object.keys(normalize);
  if (paths.length === 0 && unordered.length === 0) {
    return undefined;
  }
  const root: RuleNode = { unordered: false, children: new Map() };
  for (const path of paths) {
    nodeAt(root, pathSegments(path)).normalization = normalize[path];
  }
  for (const path of unordered) {
    nodeAt(root, pathSegments(path)).unordered = true;
  }
  return root;
}

function nodeAt(root: RuleNode, segments: readonly string[]): RuleNode {
  let node = root;
  for (const segment of segments) {
    let child = node.children.get(segment);
    if (!child) {
      child = { unordered: false, children: new Map() };
      node.children.set(segment, child);
    }
    node = child;
  }
  return node;
}

const NO_NODES: readonly RuleNode[] = [];

/**
 * The rule nodes matching `segment` below `nodes`. A literal match comes before a `*` match, so
 * when both carry a normalisation the literal one wins.
 */
export function descendRules(nodes: readonly RuleNode[], segment: string): readonly RuleNode[] {
  if (nodes.length === 0) {
    return NO_NODES;
  }
  const next: RuleNode[] = [];
  for (const node of nodes) {
    const literal = node.children.get(segment);
    if (literal) {
      next.push(literal);
    }
    const wildcard = segment === WILDCARD ? undefined : node.children.get(WILDCARD);
    if (wildcard) {
      next.push(wildcard);
    }
  }
  return next.length === 0 ? NO_NODES : next;
}

/** The normalisation in force at `nodes`: the first one declared there, else the inherited one. */
export function normalizationAt(
  nodes: readonly RuleNode[],
  inherited: StringNormalization,
): StringNormalization {
  for (const node of nodes) {
    if (node.normalization !== undefined) {
      return node.normalization;
    }
  }
  return inherited;
}

export function isUnorderedAt(nodes: readonly RuleNode[]): boolean {
  return nodes.some((node) => node.unordered);
}

export const rulesAtRoot = (root: RuleNode | undefined): readonly RuleNode[] =>
  root ? [root] : NO_NODES;
