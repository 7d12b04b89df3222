import { randomBytes } from 'node:crypto';
import type { StoredResponse } from '../../record/stored-response.js';

/** Text a store must not alter: combining marks, emoji, RTL, NUL, BOM, astral letters, escapes. */
export const unicodeText =
  'Grüße, 世界 👋🏽 — e\u0301 ≠ é, עברית, \u0000 nul, \uFEFF bom, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢, "quotes" \\ \n\t';

export const jsonResponse: StoredResponse = {
  status: 201,
  headers: { 'content-type': 'application/json; charset=utf-8', location: '/orders/77' },
  body: {
    kind: 'json',
    value: {
      id: 77,
      zeta: 'keys keep their order',
      alpha: [1, 2.5, -3e-7, 12345678901234, true, false, null, '', {}],
      nested: { deep: { deeper: ['x', { y: 'z' }] } },
      note: 'Grüße 👋',
    },
  },
};

export const textResponse: StoredResponse = {
  status: 200,
  headers: { 'content-type': 'text/plain; charset=utf-8' },
  body: { kind: 'bytes', value: new TextEncoder().encode(unicodeText) },
};

/** 1 MiB of random bytes that starts with every byte value once. */
export function oneMegabyteOfEveryByte(): Uint8Array {
  const bytes = new Uint8Array(randomBytes(1024 * 1024));
  for (let value = 0; value < 256; value += 1) bytes[value] = value;
  return bytes;
}
