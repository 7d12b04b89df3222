// Business operations, the client that sends them, and the ledger that checks the invariant:
// every operation took effect exactly once, every answer was the one result or a clear
// retryable error, and no request hung past its limit.
import { randomUUID } from 'node:crypto';

const TENANT = 'chaos-tenant';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A new distinct business operation of `kind` (order | payment | summary | report). */
export function newOperation(kind, run) {
  const id = `${kind}-${run}-${randomUUID().slice(0, 13)}`;
  switch (kind) {
    case 'order':
      return {
        id,
        kind,
        path: '/orders',
        headers: { 'idempotency-key': randomUUID() },
        body: { cartId: id, items: [{ sku: 'sku-1', qty: 2 }] },
      };
    case 'payment':
      return {
        id,
        kind,
        path: '/payments',
        headers: {},
        body: { paymentRequestNo: id, orderId: `order-of-${id}`, amount: '42.00', currency: 'EUR' },
      };
    case 'summary':
      return {
        id,
        kind,
        path: `/documents/${id}/summary`,
        headers: {},
        body: {
          content: `Document ${id}. Duplicates happen. oncely runs the work once.`,
          model: 'summarizer-small',
          language: 'en',
          promptVersion: 'p3',
        },
      };
    case 'report':
      return {
        id,
        kind,
        path: '/reports/export',
        headers: {},
        body: { reportType: 'sales', from: '2026-01-01', to: '2026-01-03', filters: { id } },
      };
    default:
      throw new Error(`unknown operation kind ${kind}`);
  }
}

export const OPERATION_OF_KIND = {
  order: 'order-create',
  payment: 'payment-submit',
  summary: 'document-summary',
  report: 'report-export',
};

/**
 * One request. `limitMs` is the longest the client waits: past it the request counts as hung.
 * Outcomes: `ok` (2xx), `retryable` (409/503 problem+json), `connection` (the process was
 * gone), `hung`, `bad` (anything else: a 500, a 409 without problem+json, …).
 */
export async function send(node, operation, { latencyMs = 50, limitMs = 30_000 } = {}) {
  const started = Date.now();
  try {
    const response = await fetch(`${node.url}${operation.path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-tenant-id': TENANT,
        'x-simulate-latency-ms': String(latencyMs),
        ...operation.headers,
      },
      body: JSON.stringify(operation.body),
      signal: AbortSignal.timeout(limitMs),
    });
    const text = await response.text();
    const type = response.headers.get('content-type') ?? '';
    const status = response.status;
    let payload = {};
    try {
      payload = JSON.parse(text);
    } catch {
      // a non-JSON body is judged by its status below
    }
    const problem = type.startsWith('application/problem+json');
    const outcome =
      status >= 200 && status < 300
        ? 'ok'
        : (status === 409 || status === 503) && problem
          ? 'retryable'
          : 'bad';
    return {
      outcome,
      status,
      executionId: payload.executionId,
      retryAfterMs: Number(response.headers.get('retry-after') ?? 0) * 1000,
      detail: outcome === 'bad' ? `${status} ${text.slice(0, 300)}` : undefined,
      ms: Date.now() - started,
    };
  } catch (error) {
    const hung = error?.name === 'TimeoutError';
    return {
      outcome: hung ? 'hung' : 'connection',
      status: hung ? 'hung' : 'conn',
      detail: `${error?.name}: ${error?.cause?.code ?? error?.message}`,
      ms: Date.now() - started,
    };
  }
}

/** Everything sent in one scenario, per operation, and the checks over it. */
export class Ledger {
  operations = new Map();
  sent = 0;
  duplicates = 0;
  /** The final re-send of every operation by `settle` (counted apart from `duplicates`). */
  lateRetries = 0;
  byStatus = {};
  bad = [];
  /** Only where processes are killed may a request end without an answer. */
  allowConnectionLoss = false;

  /** Sends `operation` to `node` and records the answer; a second send of one operation is a duplicate. */
  async send(node, operation, options, { lateRetry = false } = {}) {
    let entry = this.operations.get(operation.id);
    if (!entry) {
      entry = { operation, results: [] };
      this.operations.set(operation.id, entry);
    } else if (lateRetry) {
      this.lateRetries += 1;
    } else {
      this.duplicates += 1;
    }
    this.sent += 1;
    const result = await send(node, operation, options);
    entry.results.push(result);
    this.byStatus[result.status] = (this.byStatus[result.status] ?? 0) + 1;
    if (
      result.outcome === 'bad' ||
      result.outcome === 'hung' ||
      (result.outcome === 'connection' && !this.allowConnectionLoss)
    ) {
      this.bad.push(`${operation.id} on :${node.port}: ${result.detail}`);
    }
    return result;
  }

  /**
   * Retries every operation that has no 2xx yet, on live processes, honouring Retry-After, until
   * each has its result or `deadlineMs` passes. Then sends every operation once more (a late
   * retry) so each one is also checked as a replay.
   */
  async settle(nodes, { deadlineMs = 60_000, latencyMs = 20, limitMs = 30_000 } = {}) {
    const deadline = Date.now() + deadlineMs;
    let turn = 0;
    const pending = () =>
      [...this.operations.values()].filter((e) => !e.results.some((r) => r.outcome === 'ok'));
    while (pending().length > 0 && Date.now() < deadline) {
      await Promise.all(
        pending().map(async (entry) => {
          const node = nodes()[turn++ % nodes().length];
          const result = await this.send(node, entry.operation, { latencyMs, limitMs });
          if (result.outcome !== 'ok') await sleep(Math.min(result.retryAfterMs || 250, 1_000));
        }),
      );
    }
    const entries = [...this.operations.values()];
    for (let i = 0; i < entries.length; i += 50) {
      await Promise.all(
        entries
          .slice(i, i + 50)
          .map((entry) =>
            this.send(
              nodes()[turn++ % nodes().length],
              entry.operation,
              { latencyMs, limitMs },
              { lateRetry: true },
            ),
          ),
      );
    }
  }

  /**
   * The invariant. `db` answers for the business rows; `executions` are the handler runs from
   * the processes' log. `exactExecutions` lists the kinds whose handler may not run more than
   * once per operation in this scenario (no process died mid-handler, no transaction was cut);
   * `oneResult` the kinds whose clients must all get the same result (default: all).
   */
  async verify({ db, schema, executions, exactExecutions = [], kinds, oneResult = kinds }) {
    const failures = [...this.bad.map((b) => `unclear answer or hang: ${b}`)];
    const table = { order: 'demo_order', payment: 'demo_payment' };
    const column = { order: 'cart_id', payment: 'payment_request_no' };
    const summary = { operations: 0, rows: 0, executions: 0 };
    for (const kind of kinds) {
      const entries = [...this.operations.values()].filter((e) => e.operation.kind === kind);
      summary.operations += entries.length;
      for (const entry of entries) {
        const ids = new Set(
          entry.results.filter((r) => r.outcome === 'ok').map((r) => r.executionId),
        );
        if (ids.size === 0 || (ids.size > 1 && oneResult.includes(kind))) {
          failures.push(
            `${entry.operation.id}: ${ids.size} distinct results (${entry.results.map((r) => r.status).join(',')})`,
          );
        }
        entry.executionId = [...ids][0];
      }
      if (table[kind]) {
        const { rows } = await db.query(
          `SELECT ${column[kind]} AS id, execution_id FROM "${schema}"."${table[kind]}"`,
        );
        summary.rows += rows.length;
        const byId = new Map();
        for (const row of rows) byId.set(row.id, [...(byId.get(row.id) ?? []), row.execution_id]);
        for (const entry of entries) {
          const found = byId.get(entry.operation.id) ?? [];
          if (found.length !== 1 || found[0] !== entry.executionId) {
            failures.push(
              `${entry.operation.id}: ${found.length} ${table[kind]} rows (execution ${found.join(',')}), clients got ${entry.executionId}`,
            );
          }
        }
        if (rows.length !== entries.length) {
          failures.push(`${table[kind]}: ${rows.length} rows for ${entries.length} operations`);
        }
      }
      const ran = executions[OPERATION_OF_KIND[kind]] ?? 0;
      summary.executions += ran;
      const exact = exactExecutions.includes(kind);
      if (exact ? ran !== entries.length : ran < entries.length) {
        failures.push(
          `${kind}: ${ran} handler executions for ${entries.length} operations (expected ${exact ? 'exactly' : 'at least'} ${entries.length})`,
        );
      }
    }
    return { failures, ...summary };
  }
}

/** Picks an element at random. */
export function pick(list) {
  return list[Math.floor(Math.random() * list.length)];
}
