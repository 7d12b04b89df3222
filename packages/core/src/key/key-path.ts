/** The parts of a `KeyContext` a path may start from. */
const KEY_CONTEXT_ROOTS = ['body', 'params', 'query', 'headers', 'user', 'args', 'files'] as const;

const ROOTS: ReadonlySet<string> = new Set(KEY_CONTEXT_ROOTS);

/** Names that would walk into prototypes rather than data. */
const FORBIDDEN_SEGMENTS: ReadonlySet<string> = new Set(['__proto__', 'prototype', 'constructor']);

/**
 * Splits a context path into its segments, or explains why it is not one. `allowWildcard`
 * admits `*` segments (rule paths only).
 */
export function parseKeyPath(
  path: unknown,
  allowWildcard: boolean,
): { readonly segments: readonly string[] } | { readonly problem: string } {
  if (typeof path !== 'string' || path === '') {
    return { problem: `must be a non-empty dotted path such as 'user.tenantId'.` };
  }
  const segments = path.split('.');
  const root = segments[0] ?? '';
  if (!ROOTS.has(root)) {
    return {
      problem: `'${path}' must start with one of ${KEY_CONTEXT_ROOTS.join(', ')} (e.g. 'params.${path}').`,
    };
  }
  for (const segment of segments) {
    if (segment === '') {
      return {
        problem: `'${path}' has an empty segment; write segments separated by single dots.`,
      };
    }
    if (FORBIDDEN_SEGMENTS.has(segment)) {
      return { problem: `'${path}' walks into '${segment}', which is not request data.` };
    }
    if (segment === '*' && !allowWildcard) {
      return { problem: `'${path}' uses '*', which only normalize and unordered paths accept.` };
    }
  }
  if (root === 'headers' && segments.length > 1 && segments[1] !== segments[1]?.toLowerCase()) {
    return {
      problem: `'${path}' names a header in upper case; Node delivers header names in lower case, so write '${path.toLowerCase()}'.`,
    };
  }
  return { segments };
}

/** Reads a path from `root`; anything below a missing or primitive value is `undefined`. */
export function resolveKeyPath(root: unknown, segments: readonly string[]): unknown {
  let current = root;
  for (const segment of segments) {
    if (current === null || typeof current !== 'object') {
      return undefined;
    }
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}
