import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** What the app ended with, to send exactly as it was when `commit` comes. */
export interface HeldResponse {
  readonly status: number;
  readonly statusMessage: string | undefined;
  readonly headers: OutgoingHttpHeaders;
  readonly body: Buffer;
}

/** Whether `res` has exactly `headers`, each value the very one held. */
export function hasHeaders(res: ServerResponse, headers: OutgoingHttpHeaders): boolean {
  const names = res.getHeaderNames();
  if (names.length !== Object.keys(headers).length) return false;
  return names.every((name) => res.getHeader(name) === headers[name]);
}
