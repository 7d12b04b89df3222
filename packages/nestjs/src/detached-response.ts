import { StreamableFile } from '@nestjs/common';
import { UnsupportedResponseError, type HttpResponse } from '@oncely/core';
import { instanceToPlain } from 'class-transformer';
import { Readable } from 'node:stream';
import type { OncelyRouteEntry } from './oncely-route.registry.js';

/**
 * Refuses what cannot be kept whole (streams, files, web responses) before it reaches the
 * client: the boot refuses such declared return types, this catches the undeclared ones.
 */
export function refuseUnkeptValue(value: unknown, route: string): void {
  if (typeof value !== 'object' || value === null) return;
  if (value instanceof StreamableFile)
    throw new UnsupportedResponseError(route, 'a StreamableFile');
  if (value instanceof Readable) throw new UnsupportedResponseError(route, 'a Readable stream');
  // Checked only for non-plain objects: the first touch of these globals loads Node's fetch
  // implementation (~90 ms), which no ordinary JSON response should pay for.
  if (Object.getPrototypeOf(value) === Object.prototype || Array.isArray(value)) return;
  if (value instanceof ReadableStream)
    throw new UnsupportedResponseError(route, 'a ReadableStream');
  if (value instanceof Response) throw new UnsupportedResponseError(route, 'a web Response');
}

/**
 * The response kept when an outer layer (a timeout interceptor, most often) answered the client
 * before the handler settled: nothing of the handler reached the wire, yet its effect happened,
 * so retries must replay it rather than run it again. It is the handler's value with the route's
 * status, serialised as Nest's `ClassSerializerInterceptor` does by default (class-transformer's
 * `instanceToPlain`, so `@Exclude()`d fields are never kept).
 */
export function detachedResponseOf(value: unknown, entry: OncelyRouteEntry): HttpResponse {
  const status = entry.statusCode;
  if (value === undefined || value === null)
    return { status, headers: {}, body: { kind: 'empty' } };
  if (value instanceof Uint8Array) return { status, headers: {}, body: { kind: 'bytes', value } };
  const plain = typeof value === 'object' ? instanceToPlain(value) : value;
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: { kind: 'json', value: plain },
  };
}
