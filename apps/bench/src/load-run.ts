import autocannon from 'autocannon';

/** One request shape; `[<id>]` anywhere in it becomes a fresh id per request. */
export interface LoadRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface LoadResult {
  readonly requests: number;
  readonly seconds: number;
  readonly rps: number;
  /** Milliseconds, from every response's own timing (autocannon's histogram keeps whole ms). */
  readonly p50: number;
  readonly p99: number;
  /** Non-2xx answers, socket errors and timeouts: a contender with any is reported broken. */
  readonly failures: number;
  /** Responses per HTTP status. */
  readonly statuses: Readonly<Record<string, number>>;
}

export type LoadBound = { readonly seconds: number } | { readonly amount: number };

/** Loads `baseUrl` from this process with autocannon at `connections`, for a bounded time. */
export function runLoad(
  baseUrl: string,
  request: LoadRequest,
  connections: number,
  bound: LoadBound,
): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${baseUrl}${request.path}`,
        method: request.method,
        headers: { ...request.headers },
        ...(request.body !== undefined && { body: request.body }),
        connections,
        pipelining: 1,
        // Every contender pays the same per-request rebuild on the client side.
        idReplacement: true,
        timeout: 10,
        ...('seconds' in bound ? { duration: bound.seconds } : { amount: bound.amount }),
      },
      (error, result) => {
        if (error) return reject(error);
        const sorted = Float64Array.from(latencies).sort();
        resolve({
          requests: latencies.length,
          seconds: result.duration,
          rps: latencies.length / result.duration,
          p50: percentile(sorted, 0.5),
          p99: percentile(sorted, 0.99),
          failures: result.non2xx + result.errors + result.timeouts,
          statuses,
        });
      },
    );
    instance.on('response', (_client, status, _bytes, responseTime) => {
      latencies.push(responseTime);
      statuses[status] = (statuses[status] ?? 0) + 1;
    });
  });
}

export function percentile(sorted: ArrayLike<number>, rank: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(rank * sorted.length) - 1));
  return sorted[index]!;
}

export function median(values: readonly number[]): number {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
