import type { StoredResponse } from '../record/stored-response.js';
import { storedBodySize, type HttpResponse } from '../http/http-response.js';
import { PayloadTooLargeError } from '../http/request-rejected.errors.js';
import type { ProtectedCallResult } from './protected-call.types.js';

export const REPLAYED_HEADER = 'idempotent-replayed';

/** The kept form of a response: replay headers only, bytes as `Buffer`, within the size limit. */
export function keep(
  response: HttpResponse,
  route: {
    maxResponseBytes: number;
    replayHeaders: { pick(h: Record<string, unknown>): Record<string, string> };
  },
): StoredResponse {
  const body =
    response.body.kind === 'bytes' && !Buffer.isBuffer(response.body.value)
      ? { kind: 'bytes' as const, value: Buffer.from(response.body.value) }
      : response.body;
  const size = storedBodySize(body);
  if (size > route.maxResponseBytes) {
    throw new PayloadTooLargeError('response', route.maxResponseBytes, size);
  }
  return { status: response.status, headers: route.replayHeaders.pick(response.headers), body };
}

/** What other callers may see of a response that is not kept: its replay headers only. */
export function shareable(
  response: HttpResponse,
  route: { replayHeaders: { pick(h: Record<string, unknown>): Record<string, string> } },
): HttpResponse {
  return { ...response, headers: route.replayHeaders.pick(response.headers) };
}

// A held response answers every hit on it with one replay, made on the first.
const replays = new WeakMap<StoredResponse, HttpResponse>();

/** A kept response as a replay: its kept headers plus `idempotent-replayed: true`. */
export function replayOf(response: StoredResponse): HttpResponse {
  let replay = replays.get(response);
  if (replay !== undefined) return replay;
  const headers: Record<string, string> = { ...response.headers };
  headers[REPLAYED_HEADER] = 'true';
  replay = { status: response.status, headers, body: response.body };
  replays.set(response, replay);
  return replay;
}

/**
 * A response another call made, handed to a call that is not replaying anything of its own: a
 * new idempotency record whose enclosed SingleFlight shared a result answers it as its first.
 */
export function withoutReplayMark(response: HttpResponse): HttpResponse {
  if (!(REPLAYED_HEADER in response.headers)) return response;
  const headers: Record<string, string> = { ...response.headers };
  delete headers[REPLAYED_HEADER];
  return { status: response.status, headers, body: response.body };
}

/** The answer of a call that shares a kept response rather than running its handler. */
export function sharedReply(response: StoredResponse): ProtectedCallResult {
  return { response: replayOf(response), replayed: true };
}
