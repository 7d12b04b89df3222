import assert from 'node:assert/strict';
import type { ConformanceResponse } from './conformance-client.js';

/** Asserts an RFC 9457 problem response of the given status and `type`. */
export function assertProblem(response: ConformanceResponse, status: number, type: string): void {
  assert.equal(
    response.status,
    status,
    `expected ${status}, got ${response.status}: ${response.text}`,
  );
  assert.match(response.headers['content-type'] ?? '', /^application\/problem\+json/);
  assert.equal(response.body?.type, type, `problem type of ${response.text}`);
}

/** Asserts a replay: same status and body bytes as the first response, marked as replayed. */
export function assertReplayOf(replay: ConformanceResponse, first: ConformanceResponse): void {
  assert.equal(
    replay.headers['idempotent-replayed'],
    'true',
    `not a replay: ${replay.status} ${replay.text}`,
  );
  assert.equal(replay.status, first.status);
  assert.equal(replay.text, first.text);
}

export function assertNotReplayed(response: ConformanceResponse): void {
  assert.equal(
    response.headers['idempotent-replayed'],
    undefined,
    `unexpected replay: ${response.status} ${response.text}`,
  );
}

/** `Retry-After` as delta-seconds, at least one second. */
export function assertRetryAfter(response: ConformanceResponse): void {
  const value = response.headers['retry-after'];
  assert.ok(value !== undefined, `no Retry-After on ${response.status} ${response.text}`);
  assert.match(value, /^\d+$/);
  assert.ok(Number(value) >= 1, `Retry-After ${value}`);
}

export function statuses(responses: readonly ConformanceResponse[]): number[] {
  return responses.map((response) => response.status);
}

export function replayedCount(responses: readonly ConformanceResponse[]): number {
  return responses.filter((response) => response.headers['idempotent-replayed'] === 'true').length;
}
