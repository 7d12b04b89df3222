import { buildKey, KeySpecError, validateKeySpec, type KeySpec } from '@oncely/core';

const valid: KeySpec = { namespace: 'shop', operation: 'order-create', scope: 'user.tenantId' };

function problemOf(spec: unknown): KeySpecError {
  try {
    validateKeySpec(spec as KeySpec);
  } catch (error) {
    if (error instanceof KeySpecError) {
      return error;
    }
    throw error;
  }
  throw new Error('the spec was accepted');
}

describe('validateKeySpec', () => {
  it('accepts a complete spec', () => {
    expect(() =>
      validateKeySpec({
        namespace: 'ai',
        operation: 'document-summary',
        version: 'prompt-v2',
        scope: ['user.tenantId', { path: 'headers.x-session', optional: true, default: 'none' }],
        target: [
          { path: 'params.docId' },
          (ctx) => ctx.query,
          { path: 'query.draft', optional: true, default: false },
        ],
        input: ['body.text', 'query.language'],
        fingerprintBits: 256,
        normalize: { 'body.text': 'exact', 'query.language': (value) => value.toLowerCase() },
        unordered: ['body.text.*'],
      }),
    ).not.toThrow();
  });

  it.each([
    ['a missing namespace', { operation: 'x' }, 'namespace'],
    ['a missing operation', { namespace: 'shop' }, 'operation'],
    ['an empty operation', { namespace: 'shop', operation: '' }, 'operation'],
    ['an operation with a colon', { namespace: 'shop', operation: 'order:create' }, 'operation'],
    ['a namespace with a space', { namespace: 'my shop', operation: 'x' }, 'namespace'],
    [
      'an operation of 65 characters',
      { namespace: 'shop', operation: 'o'.repeat(65) },
      'operation',
    ],
    ['a version starting with a dash', { ...valid, version: '-v1' }, 'version'],
    ['fingerprintBits below 64', { ...valid, fingerprintBits: 60 }, 'fingerprintBits'],
    ['fingerprintBits above 256', { ...valid, fingerprintBits: 260 }, 'fingerprintBits'],
    ['fingerprintBits not a multiple of 4', { ...valid, fingerprintBits: 66 }, 'fingerprintBits'],
    ['fingerprintBits not an integer', { ...valid, fingerprintBits: 64.5 }, 'fingerprintBits'],
    ['an unknown spec property', { ...valid, fingerprintbits: 64 }, 'fingerprintbits'],
    ['a path outside the context', { ...valid, scope: 'tenantId' }, 'scope[0]'],
    ['a path with an empty segment', { ...valid, target: 'params..id' }, 'target[0]'],
    ['a path into a prototype', { ...valid, target: 'body.__proto__' }, 'target[0]'],
    ['a wildcard in a scope path', { ...valid, scope: 'user.*' }, 'scope[0]'],
    ['an upper-case header name', { ...valid, scope: 'headers.X-Tenant' }, 'scope[0]'],
    [
      'an optional path without a default',
      { ...valid, scope: { path: 'user.tenantId', optional: true } },
      'scope[0].default',
    ],
    [
      'an optional path with an empty default',
      { ...valid, scope: { path: 'user.tenantId', optional: true, default: ' ' } },
      'scope[0].default',
    ],
    [
      'an optional path with a null default',
      { ...valid, scope: { path: 'user.tenantId', optional: true, default: null } },
      'scope[0].default',
    ],
    [
      'a boolean default for a scope value (scope values are identities)',
      { ...valid, scope: { path: 'user.tenantId', optional: true, default: false } },
      'scope[0].default',
    ],
    [
      'a default on a required path',
      { ...valid, target: [{ path: 'params.id', default: 'x' }] },
      'target[0].default',
    ],
    [
      'a misspelt field option',
      { ...valid, target: { path: 'params.id', optinal: true, default: 'x' } },
      'target[0].optinal',
    ],
    ['a number as a source', { ...valid, target: 42 }, 'target[0]'],
    ['overlapping input paths', { ...valid, input: ['body', 'body.amount'] }, 'input[1]'],
    ['a duplicated input path', { ...valid, input: ['body.a', 'body.a'] }, 'input[0]'],
    [
      'an unknown normalisation',
      { ...valid, normalize: { 'body.a': 'lower' } },
      "normalize['body.a']",
    ],
    [
      'a rule outside the input',
      { ...valid, normalize: { 'query.q': 'exact' } },
      "normalize['query.q']",
    ],
    [
      'an unordered path outside the input',
      { ...valid, unordered: ['params.list'] },
      'unordered[0]',
    ],
    ['unordered given as a string', { ...valid, unordered: 'body.tags' }, 'unordered'],
  ])('rejects %s', (_, spec, field) => {
    const error = problemOf(spec);

    expect(error.field).toBe(field);
    expect(error.code).toBe('key_spec_invalid');
  });

  it('says what is wrong and how to fix it', () => {
    const error = problemOf({ ...valid, fingerprintBits: 32 });

    expect(error.message).toBe(
      'Invalid key spec shop:order-create: fingerprintBits must be a multiple of 4 from 64 to 256 (default 128); got 32.',
    );
    expect(problemOf({ namespace: 'shop' }).message).toMatch(/operation is required/);
  });

  it('fails buildKey with the same error before reading any request data', () => {
    const spec = { namespace: 'shop', operation: 'x', fingerprintBits: 8 };

    expect(() => buildKey(spec, {})).toThrow(KeySpecError);
  });
});
