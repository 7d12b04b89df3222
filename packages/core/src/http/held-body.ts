import { PayloadTooLargeError } from './request-rejected.errors.js';
import { UnsupportedResponseError } from './unsupported-response.error.js';

/**
 * The body an app writes, collected chunk by chunk up to `maxBytes`: text in an encoding Node
 * knows, and bytes. Anything else, or more, cannot be kept: `add` says why.
 */
export class HeldBody {
  #chunks: Buffer[] = [];
  #size = 0;

  constructor(
    /** Names the route in a refusal. */
    private readonly route: string,
    private readonly maxBytes: number,
  ) {}

  /** Adds a chunk, or returns why the body cannot be kept (nothing is added then). */
  add(chunk: unknown, encoding: string | undefined): Error | undefined {
    let bytes: Buffer;
    if (typeof chunk === 'string') {
      if (encoding !== undefined && !Buffer.isEncoding(encoding)) {
        return new UnsupportedResponseError(this.route, `text in encoding "${encoding}"`);
      }
      bytes = Buffer.from(chunk, encoding ?? 'utf8');
    } else if (chunk instanceof Uint8Array) {
      bytes = Buffer.from(chunk);
    } else {
      return new UnsupportedResponseError(this.route, `a body chunk of type ${typeof chunk}`);
    }
    this.#size += bytes.byteLength;
    if (this.#size > this.maxBytes) {
      return new PayloadTooLargeError('response', this.maxBytes, this.#size);
    }
    this.#chunks.push(bytes);
    return undefined;
  }

  /** The whole body so far, in one buffer; the chunks are let go. */
  take(): Buffer {
    const body = Buffer.concat(this.#chunks);
    this.clear();
    return body;
  }

  clear(): void {
    this.#chunks = [];
  }
}
