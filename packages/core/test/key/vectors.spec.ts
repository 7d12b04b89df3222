import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  BUSINESS_KEY_PATTERN,
  buildKey,
  canonicalKeyInput,
  OncelyError,
  type KeySpec,
} from '@oncely/core';
import { decodeVectorContext } from './vector-codec.js';

interface Vector {
  readonly name: string;
  readonly spec: KeySpec;
  readonly ctx: unknown;
  readonly canonical?: string;
  readonly key?: string;
  readonly identity?: string;
  readonly fingerprint?: string;
  readonly digest?: string;
  readonly error?: { readonly name: string; readonly code: string };
}

const { cases } = JSON.parse(readFileSync(new URL('../vectors.json', import.meta.url), 'utf8')) as {
  cases: Vector[];
};
const keyed = cases.filter((vector) => !vector.error);
const failing = cases.filter((vector) => vector.error);

describe('golden vectors', () => {
  it('hold at least 40 keyed cases and some failing ones', () => {
    expect(keyed.length).toBeGreaterThanOrEqual(40);
    expect(failing.length).toBeGreaterThan(0);
  });

  it.each(keyed.map((vector) => [vector.name, vector] as const))('%s', (_, vector) => {
    const ctx = decodeVectorContext(vector.ctx);

    expect(canonicalKeyInput(vector.spec, ctx)).toBe(vector.canonical);
    expect(buildKey(vector.spec, ctx)).toEqual({
      key: vector.key,
      identity: vector.identity,
      fingerprint: vector.fingerprint,
      digest: vector.digest,
    });
    expect(
      createHash('sha256')
        .update(vector.canonical ?? '', 'utf8')
        .digest('hex'),
    ).toBe(vector.digest);
    expect(vector.key).toMatch(BUSINESS_KEY_PATTERN);
  });

  it.each(failing.map((vector) => [vector.name, vector] as const))('%s', (_, vector) => {
    const ctx = decodeVectorContext(vector.ctx);
    let raised: unknown;
    try {
      buildKey(vector.spec, ctx);
    } catch (error) {
      raised = error;
    }

    expect(raised).toBeInstanceOf(OncelyError);
    expect(raised).toMatchObject({ name: vector.error?.name, code: vector.error?.code });
  });
});
