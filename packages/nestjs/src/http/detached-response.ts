import { StreamableFile } from '@nestjs/common';
import { UnsupportedResponseError } from '@oncely/core';
import { storedBodyOf, type HttpResponse } from '@oncely/core/adapter';
import { instanceToPlain } from 'class-transformer';
import type { HttpRouteEntry } from '../discovery/protected-handler.entry.js';

/**
 * Refuses a file response before it reaches the client: the boot refuses such declared return
 * types, this catches the undeclared ones. Streams and web responses are refused by core, where
 * the value is kept (`ResponseCapture.holdingFor`, `storedBodyOf`).
 */
export function refuseFileResponse(value: unknown, route: string): void {
  if (value instanceof StreamableFile)
    throw new UnsupportedResponseError(route, 'a StreamableFile');
}

/**
 * The response kept when an outer layer (a timeout interceptor, most often) answered the client
 * before the handler settled: nothing of the handler reached the wire, yet its effect happened,
 * so retries must replay it rather than run it again. It is the handler's value with the route's
 * status, serialised as Nest's `ClassSerializerInterceptor` does by default (class-transformer's
 * `instanceToPlain`, so `@Exclude()`d fields are never kept).
 */
export function detachedResponseOf(value: unknown, entry: HttpRouteEntry): HttpResponse {
  const route = entry.route.name;
  let body = storedBodyOf(value, route);
  if (body.kind === 'json' && typeof value === 'object' && value !== null) {
    body = storedBodyOf(instanceToPlain(value), route);
  }
  const headers: Record<string, string> =
    body.kind === 'json' ? { 'content-type': 'application/json; charset=utf-8' } : {};
  return { status: entry.statusCode, headers, body };
}
