/**
 * Characters that keep a string from being written as `"` + itself + `"`: controls, `"` and `\`
 * (JSON escapes them), and anything beyond Latin-1 (it may need NFC, or be a lone surrogate). A
 * string without them is its own NFC form (no Latin-1 character decomposes or composes with a
 * neighbour) and its own JSON content.
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what it looks for
export const NEEDS_CARE = /[\u0000-\u001f"\\\u0100-\uffff]/;

/** `text` as a JSON string, for text known to hold none of the characters `NEEDS_CARE` finds. */
export const quotePlain = (text: string) => `"${text}"`;

/** What `JSON.stringify` escapes in a well-formed string. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what it looks for
const NEEDS_ESCAPE = /[\u0000-\u001f"\\]/;

/**
 * Well-formed `text` as RFC 8785 writes a string. JCS takes its string form from
 * `JSON.stringify`, so this is the same escaping; it is a call into the runtime, so text with
 * nothing to escape skips it.
 */
export const quoteString = (text: string) =>
  NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : quotePlain(text);

/** `quoteString` without the quotes. */
export const escapedContent = (text: string) =>
  NEEDS_ESCAPE.test(text) ? JSON.stringify(text).slice(1, -1) : text;

/** Three-way comparison by UTF-16 code units, the order RFC 8785 sorts property names in. */
export const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** An object member or map entry on its way into the text, sorted by `key`. */
export interface TextEntry {
  readonly key: string;
  readonly text: string;
}

export const byKey = (a: TextEntry, b: TextEntry) => compareText(a.key, b.key);

/** Sorts `entries` by key and returns the first key found twice, if any. */
export function sortedUniquely(entries: TextEntry[]): string | undefined {
  entries.sort(byKey);
  for (let index = 1; index < entries.length; index++) {
    const key = (entries[index] as TextEntry).key;
    if (key === (entries[index - 1] as TextEntry).key) {
      return key;
    }
  }
  return undefined;
}

/** A JSON object of sorted entries whose keys are (unquoted) names and texts canonical values. */
export const objectText = (entries: readonly TextEntry[]) =>
  `{${entries.map(({ key, text }) => `${quoteString(key)}:${text}`).join(',')}}`;

/**
 * Sorts `order`, indexes into `keys`, by their keys in UTF-16 code unit order. Insertion sort
 * beats the generic sort on DTO-sized objects.
 */
export function sortByKey(order: number[], keys: readonly string[]): void {
  if (order.length > 32) {
    order.sort((a, b) => compareText(keys[a] as string, keys[b] as string));
    return;
  }
  for (let index = 1; index < order.length; index++) {
    const moving = order[index] as number;
    const key = keys[moving] as string;
    let slot = index - 1;
    while (slot >= 0 && (keys[order[slot] as number] as string) > key) {
      order[slot + 1] = order[slot] as number;
      slot--;
    }
    order[slot + 1] = moving;
  }
}

/** A JSON array of already canonical element texts. */
export const arrayText = (texts: readonly string[]) => `[${texts.join(',')}]`;

/** A single-member object whose key is a tag (`$set`, `$bigint`, …) and whose value is `text`. */
export const taggedText = (tag: string, text: string) => `{"${tag}":${text}}`;
