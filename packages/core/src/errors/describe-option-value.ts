/**
 * A rejected option value as an error message shows it: strings quoted, numbers and booleans as
 * they are, objects only by their kind (they may be large or hold secrets).
 */
export function describeOptionValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}
