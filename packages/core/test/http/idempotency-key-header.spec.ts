import { parseIdempotencyKeyHeader } from '../../src/http/idempotency-key-header.js';

describe('parseIdempotencyKeyHeader', () => {
  it.each([
    ['a bare UUID', '8e03978e-40d5-43e8-bc93-6894a57f9324', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['a structured-field string', '"order 42: retry"', 'order 42: retry'],
    ['an sf-string with escapes', '"say \\"hi\\""', 'say "hi"'],
    ['surrounding whitespace', '  abc  ', 'abc'],
    ['255 characters', 'k'.repeat(255), 'k'.repeat(255)],
  ])('accepts %s', (_case, raw, value) => {
    expect(parseIdempotencyKeyHeader(raw)).toEqual({ kind: 'valid', value });
  });

  it('reports an absent header', () => {
    expect(parseIdempotencyKeyHeader(undefined)).toEqual({ kind: 'absent' });
    expect(parseIdempotencyKeyHeader([])).toEqual({ kind: 'absent' });
  });

  it.each([
    ['empty', ''],
    ['an empty sf-string', '""'],
    ['256 characters', 'k'.repeat(256)],
    ['inner spaces outside quotes', 'two words'],
    ['two keys joined by Node', 'a, b'],
    ['an unterminated sf-string', '"abc'],
    ['an sf-string with parameters', '"abc";x=1'],
    ['non-ASCII text', '"clé"'],
    ['an sf-integer disguised as quoted', '"a"b'],
  ])('refuses %s', (_case, raw) => {
    expect(parseIdempotencyKeyHeader(raw).kind).toBe('malformed');
  });

  it('refuses a header sent more than once', () => {
    expect(parseIdempotencyKeyHeader(['a', 'b'])).toEqual({
      kind: 'malformed',
      reason: 'the header was sent more than once',
    });
  });
});
