/** What a test sees of one response. */
export interface DemoResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

export interface DemoRequestOptions {
  readonly tenant?: string | null;
  readonly idempotencyKey?: string;
  readonly latencyMs?: number | string;
  readonly headers?: Record<string, string>;
}

/** POSTs JSON to a demo node as a client would, with the demo's identity headers. */
export async function post(
  baseUrl: string,
  path: string,
  body: unknown,
  options: DemoRequestOptions = {},
): Promise<DemoResponse> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...options.headers,
  };
  if (options.tenant !== null) headers['x-tenant-id'] = options.tenant ?? 'tenant-a';
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
  if (options.latencyMs !== undefined) headers['x-simulate-latency-ms'] = String(options.latencyMs);
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: await bodyOf(response) };
}

export async function get(baseUrl: string, path: string): Promise<DemoResponse> {
  const response = await fetch(`${baseUrl}${path}`);
  return { status: response.status, headers: response.headers, body: await bodyOf(response) };
}

async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  return type.includes('json') && text !== '' ? JSON.parse(text) : text;
}

/** Resolves once `condition` holds, checking every 20 ms (a wait, never an assertion on time). */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
): Promise<void> {
  for (let i = 0; i < 1500; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`Gave up waiting for ${what}.`);
}
