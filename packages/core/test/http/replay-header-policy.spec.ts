import { ReplayHeaderPolicyError } from '@oncely/core';
import { DEFAULT_REPLAY_HEADERS, ReplayHeaderPolicy } from '../../src/http/replay-header-policy.js';
import {
  isDeterministicClientError,
  isStorableStatus,
} from '../../src/http/response-storage-policy.js';

describe('ReplayHeaderPolicy', () => {
  it('keeps the safe default set and the allowlist, lower-cased, and drops the rest', () => {
    const policy = ReplayHeaderPolicy.create(['X-Order-Version']);
    expect(
      policy.pick({
        'Content-Type': 'application/json',
        location: '/orders/1',
        etag: '"1"',
        'x-order-version': 7,
        vary: ['accept', 'origin'],
        'set-cookie': ['a=1'],
        date: 'now',
        'x-request-id': 'trace',
      }),
    ).toEqual({
      'content-type': 'application/json',
      location: '/orders/1',
      etag: '"1"',
      'x-order-version': '7',
      vary: 'accept, origin',
    });
    expect(DEFAULT_REPLAY_HEADERS).toEqual(
      expect.arrayContaining(['content-type', 'location', 'etag', 'cache-control']),
    );
  });

  it.each([
    'set-cookie',
    'Set-Cookie',
    'date',
    'content-length',
    'transfer-encoding',
    'connection',
    'keep-alive',
    'upgrade',
    'te',
    'trailer',
  ])('refuses %s at creation, saying why', (header) => {
    expect(() => ReplayHeaderPolicy.create([header])).toThrow(ReplayHeaderPolicyError);
    expect(() => ReplayHeaderPolicy.create([header])).toThrow(/cannot be replayed: .+\. Remove it/);
  });

  it('refuses names that are not header names', () => {
    expect(() => ReplayHeaderPolicy.create(['x bad'])).toThrow(/not a valid header name/);
  });
});

describe('which responses are stored', () => {
  it.each([200, 201, 202, 204, 400, 403, 404, 410, 422])('stores %i', (status) => {
    expect(isStorableStatus(status)).toBe(true);
  });

  it.each([101, 301, 304, 401, 407, 408, 409, 423, 425, 429, 500, 502, 503, 504])(
    'never stores %i',
    (status) => {
      expect(isStorableStatus(status)).toBe(false);
    },
  );

  it('shares only deterministic 4xx as failures', () => {
    expect(isDeterministicClientError(400)).toBe(true);
    expect(isDeterministicClientError(429)).toBe(false);
    expect(isDeterministicClientError(200)).toBe(false);
    expect(isDeterministicClientError(500)).toBe(false);
  });
});
