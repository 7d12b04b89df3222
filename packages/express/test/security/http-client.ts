/** A response as the hostile suites look at it. */
export interface SentResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Record<string, unknown>;
}

/**
 * POSTs over a kept-alive connection (fetch), much cheaper per request than supertest's
 * connection per call, which matters for thousands of generated cases.
 */
export async function post(
  baseUrl: string,
  path: string,
  request: { headers?: Record<string, string>; body?: unknown; rawBody?: string },
): Promise<SentResponse> {
  const raw = request.rawBody !== undefined;
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...request.headers },
    body: raw ? request.rawBody : JSON.stringify(request.body ?? {}),
  });
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { text };
  }
  return { status: response.status, headers: Object.fromEntries(response.headers), body };
}
