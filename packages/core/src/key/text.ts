/** Whether `text` is well-formed UTF-16 (no lone surrogates), i.e. encodable as UTF-8. */
export function isWellFormed(text: string): boolean {
  // String.prototype.isWellFormed exists from Node 20 on; the ES2023 typings predate it.
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** A short name for a value's type, for error messages that must not echo the value itself. */
export function describeValue(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'an array';
  }
  if (typeof value === 'object') {
    const name = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)
      ?.constructor?.name;
    return name && name !== 'Object' ? `a ${name}` : 'an object';
  }
  return typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`;
}
