import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { OncelyConfigurationError } from '../errors/oncely-configuration.error.js';
import { SealedDataError } from './sealed-data.error.js';

/** One AES-256 key: `secret` is 32 bytes, or their base64 text. */
export interface EncryptionKey {
  /** Named in every value it seals, so it can be found again after rotation. */
  readonly id: string;
  /** 32 random bytes, or their base64 text; keep it out of source control. */
  readonly secret: Uint8Array | string;
}

/** The `encryption` option: encrypts stored responses and cached results at rest. */
export interface EncryptionOptions {
  /**
   * The first key seals, every key opens: to rotate, put a new key first and keep the old ones
   * until everything they sealed has expired (the retention of records, the TTL of results).
   */
  readonly keys: readonly EncryptionKey[];
}

const MAGIC = Buffer.from('OE1', 'latin1');
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID_PATTERN = /^[A-Za-z0-9._~-]{1,64}$/;

/**
 * AES-256-GCM over a list of keys. A sealed value is `"OE1" | idLength | keyId | iv | tag |
 * ciphertext`; `context` is authenticated (not stored), so a value only opens where it was sealed
 * (same record identity, same flight key) and any change to it fails as `SealedDataError`.
 */
export class EncryptionKeyring {
  readonly #keys: ReadonlyMap<string, Buffer>;
  readonly #sealWith: { readonly id: string; readonly key: Buffer };

  constructor(owner: string, options: EncryptionOptions) {
    const list = options?.keys;
    if (!Array.isArray(list) || list.length === 0) {
      throw new OncelyConfigurationError(
        `${owner} option "encryption.keys" must be a non-empty array of { id, secret } (secret: 32 random bytes or their base64).`,
      );
    }
    const keys = new Map<string, Buffer>();
    for (const [index, entry] of (list as readonly EncryptionKey[]).entries()) {
      const id: unknown = entry?.id;
      if (typeof id !== 'string' || !KEY_ID_PATTERN.test(id) || keys.has(id)) {
        throw new OncelyConfigurationError(
          `${owner} option "encryption.keys[${index}].id" must be a unique name of 1-64 characters A-Z a-z 0-9 . _ ~ -.`,
        );
      }
      keys.set(id, secretOf(owner, index, entry.secret));
    }
    this.#keys = keys;
    const first = list[0] as EncryptionKey;
    this.#sealWith = { id: first.id, key: keys.get(first.id) as Buffer };
  }

  seal(plaintext: Uint8Array, context: string): Buffer {
    const id = Buffer.from(this.#sealWith.id, 'latin1');
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#sealWith.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([MAGIC, Buffer.of(id.length), id, iv, cipher.getAuthTag(), ciphertext]);
  }

  /** Whether `value` looks sealed (an unsealed value never starts with the marker by chance). */
  static isSealed(value: Uint8Array): boolean {
    return value.length > MAGIC.length && Buffer.from(value).subarray(0, 3).equals(MAGIC);
  }

  open(sealed: Uint8Array, context: string): Buffer {
    const value = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    if (!EncryptionKeyring.isSealed(value)) throw new SealedDataError('not_sealed', undefined);
    const idLength = value[MAGIC.length] as number;
    const ivAt = MAGIC.length + 1 + idLength;
    const tagAt = ivAt + IV_BYTES;
    const dataAt = tagAt + TAG_BYTES;
    if (value.length < dataAt) throw new SealedDataError('malformed', undefined);
    const keyId = value.subarray(MAGIC.length + 1, ivAt).toString('latin1');
    const key = this.#keys.get(keyId);
    if (key === undefined) throw new SealedDataError('unknown_key', keyId);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, value.subarray(ivAt, tagAt));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(value.subarray(tagAt, dataAt));
      return Buffer.concat([decipher.update(value.subarray(dataAt)), decipher.final()]);
    } catch {
      throw new SealedDataError('tampered', keyId);
    }
  }
}

function secretOf(owner: string, index: number, secret: unknown): Buffer {
  const bytes =
    typeof secret === 'string'
      ? Buffer.from(secret, 'base64')
      : secret instanceof Uint8Array
        ? Buffer.from(secret)
        : undefined;
  if (bytes?.length !== 32) {
    throw new OncelyConfigurationError(
      `${owner} option "encryption.keys[${index}].secret" must be 32 bytes (AES-256), as a Uint8Array or base64 text; generate one with crypto.randomBytes(32).toString('base64').`,
    );
  }
  return bytes;
}
