import { ResultTooLargeError } from './result-too-large.error.js';
import { TAG, fromValueTree, toValueTree } from './value-tree.js';

/** Default `maxResultBytes`: results are cached in the coordinator's store, so keep them small. */
export const DEFAULT_MAX_RESULT_BYTES = 1024 * 1024;

const TAG_KEY_TEXT = `${JSON.stringify(TAG)}:`;

/**
 * Lossless text form of flight results and shared errors, as stored by coordinators: the tree of
 * `toValueTree` as JSON. Carries JSON values plus, anywhere in the value, `Date`, `Buffer`,
 * `Uint8Array`, `bigint`, `Map`, `Set` and `undefined`; refuses what would come back different
 * with `ResultNotSerializableError`, and payloads above `maxBytes` (UTF-8) with
 * `ResultTooLargeError`, before anything is stored. Objects are kept as JSON would send them
 * (`json` fidelity): a flight's result is a response, or a value call's tree already kept.
 */
export class ResultCodec {
  constructor(readonly maxBytes: number = DEFAULT_MAX_RESULT_BYTES) {}

  encode(value: unknown): string {
    const payload = JSON.stringify(toValueTree(value, 'json'));
    // UTF-8 needs at most 3 bytes per UTF-16 unit, so short payloads skip the exact count.
    if (payload.length * 3 > this.maxBytes) {
      const sizeBytes = Buffer.byteLength(payload, 'utf8');
      if (sizeBytes > this.maxBytes) throw new ResultTooLargeError(sizeBytes, this.maxBytes);
    }
    return payload;
  }

  decode(payload: string): unknown {
    const parsed: unknown = JSON.parse(payload);
    // `JSON.stringify` writes every tag key as exactly `"$t":`; a payload without that text holds
    // no tag, and what `JSON.parse` built (`__proto__` keys included, as own properties) is the
    // value itself, with no second walk over it.
    return payload.includes(TAG_KEY_TEXT) ? fromValueTree(parsed) : parsed;
  }
}
