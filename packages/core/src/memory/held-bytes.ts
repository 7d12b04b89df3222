/**
 * What the caches bounded by `maxBytes` count for one entry beyond its data: the Map or LRU
 * node, the entry object and its fields. An estimate, on the high side for small entries, so
 * that a bound in bytes also holds for a stream of tiny ones.
 */
export const ENTRY_OVERHEAD_BYTES = 256;

/**
 * Bytes a string may take on the heap: V8 keeps one byte per character for Latin-1 text and two
 * otherwise, and telling which costs a scan, so every character counts two. Never an undercount.
 */
export function textBytes(text: string): number {
  return 2 * text.length;
}
