import { SharedFlightError } from '@oncely/core';
import { HttpStatusFailurePolicy } from '@oncely/core/adapter';

class HttpException extends Error {
  constructor(
    private readonly response: unknown,
    private readonly status: number,
  ) {
    super(typeof response === 'string' ? response : 'Http Exception');
    this.name = 'BadRequestException';
  }
  getStatus() {
    return this.status;
  }
  getResponse() {
    return this.response;
  }
}

describe('HttpStatusFailurePolicy', () => {
  const policy = new HttpStatusFailurePolicy();
  const withStatus = (status: number) => Object.assign(new Error('x'), { status });

  it.each([400, 401, 403, 404, 410, 413, 415, 422, 451, 499])('shares %i', (status) => {
    expect(policy.classify(withStatus(status))).toBe('deterministic');
  });

  it.each([408, 409, 425, 429, 500, 502, 503, 504, 200, 302])('does not share %i', (status) => {
    expect(policy.classify(withStatus(status))).toBe('transient');
  });

  it('reads statusCode and getStatus()', () => {
    expect(policy.classify(Object.assign(new Error('x'), { statusCode: 422 }))).toBe(
      'deterministic',
    );
    expect(policy.classify(new HttpException('bad', 400))).toBe('deterministic');
    expect(policy.classify(new HttpException('busy', 429))).toBe('transient');
  });

  it.each([
    ['a plain Error', new Error('boom')],
    ['a string', 'boom'],
    ['undefined', undefined],
    ['a non-numeric status', Object.assign(new Error('x'), { status: '400' })],
  ])('treats %s as transient', (_label, error) => {
    expect(policy.classify(error)).toBe('transient');
  });

  it('carries name, message, status, code and body to a SharedFlightError', () => {
    const body = { statusCode: 400, message: ['amount must be positive'], error: 'Bad Request' };
    const original = Object.assign(new HttpException(body, 400), { code: 'E_AMOUNT' });
    const serialized = policy.serialize(original);
    expect(serialized).toEqual({
      name: 'BadRequestException',
      message: 'Http Exception',
      status: 400,
      code: 'E_AMOUNT',
      body,
    });
    const shared = policy.deserialize(JSON.parse(JSON.stringify(serialized)));
    expect(shared).toBeInstanceOf(SharedFlightError);
    expect(shared).toMatchObject({
      code: 'flight_error_shared',
      originalName: 'BadRequestException',
      message: 'Http Exception',
      status: 400,
      originalCode: 'E_AMOUNT',
      body,
    });
  });

  it('takes a body property when there is no getResponse()', () => {
    const error = Object.assign(new Error('invalid'), { status: 422, body: { field: 'x' } });
    expect(policy.serialize(error)).toEqual({
      name: 'Error',
      message: 'invalid',
      status: 422,
      body: { field: 'x' },
    });
  });

  it('rebuilds an error from a malformed payload instead of throwing', () => {
    expect(policy.deserialize(null)).toMatchObject({ status: 500, originalName: 'Error' });
  });
});
