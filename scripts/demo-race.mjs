#!/usr/bin/env node
// npm run demo:race — three demo processes (built output) on Redis + PostgreSQL, 100 concurrent
// duplicates of each protected route spread across them, one table per route. Exits 1 when a
// route executed more than once (or not at all), or when a process fails to start.
//
// Uses REDIS_URL (default redis://127.0.0.1:6379) and DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/test). Everything it creates is its own and removed at the
// end: a PostgreSQL schema `oncely_race_<random>` and Redis keys under `oncely-race-<random>:`.
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';

const NODES = 3;
const DUPLICATES = 100;
const LATENCY_MS = '1000';
const root = fileURLToPath(new URL('../', import.meta.url));
const main = `${root}apps/demo/dist/main.js`;
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const run = randomBytes(4).toString('hex');
const schema = `oncely_race_${run}`;
const keyPrefix = `oncely-race-${run}:`;

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startNode(index) {
  const port = await freePort();
  const child = spawn(process.execPath, [main], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      DATABASE_SCHEMA: schema,
      REDIS_URL: redisUrl,
      ONCELY_REDIS_PREFIX: keyPrefix,
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    const ok = await fetch(`${url}/health`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) return { index, url, child };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`demo process ${index + 1} did not become healthy:\n${output}`);
}

async function stopNode(node) {
  if (node.child.exitCode !== null) return;
  const exited = new Promise((resolve) => node.child.once('exit', resolve));
  node.child.kill('SIGTERM');
  const timer = setTimeout(() => node.child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

async function post(url, path, body, headers) {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-tenant-id': 'race-tenant',
      'x-simulate-latency-ms': LATENCY_MS,
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const payload = await response.json().catch(() => ({}));
  return {
    status: response.status,
    executionId: payload.executionId,
    replayed: response.headers.get('idempotent-replayed') === 'true',
  };
}

async function executionsOf(nodes, operation) {
  const stats = await Promise.all(nodes.map((n) => fetch(`${n.url}/stats`).then((r) => r.json())));
  return stats.reduce((sum, s) => sum + (s.executions[operation] ?? 0), 0);
}

async function countRows(db, table, column, value) {
  const { rows } = await db.query(
    `SELECT count(*)::int AS n FROM "${schema}"."${table}" WHERE ${column} = $1`,
    [value],
  );
  return rows[0].n;
}

function scenarios() {
  const cartId = `cart-${run}`;
  const paymentRequestNo = `PR-${run}`;
  const orderKey = randomUUID();
  return [
    {
      route: 'POST /orders',
      operation: 'order-create',
      send: (url) =>
        post(
          url,
          '/orders',
          { cartId, items: [{ sku: 'sku-1', qty: 2 }] },
          { 'idempotency-key': orderKey },
        ),
      rows: (db) => countRows(db, 'demo_order', 'cart_id', cartId),
    },
    {
      route: 'POST /payments',
      operation: 'payment-submit',
      send: (url) =>
        post(
          url,
          '/payments',
          { paymentRequestNo, orderId: cartId, amount: '100.00', currency: 'EUR' },
          {},
        ),
      rows: (db) => countRows(db, 'demo_payment', 'payment_request_no', paymentRequestNo),
    },
    {
      route: 'POST /reports/export',
      operation: 'report-export',
      send: (url) =>
        post(
          url,
          '/reports/export',
          { reportType: 'sales', from: '2026-01-01', to: '2026-01-31', filters: { run } },
          {},
        ),
    },
    {
      route: 'POST /documents/:docId/summary',
      operation: 'document-summary',
      send: (url) =>
        post(
          url,
          `/documents/doc-${run}/summary`,
          {
            content: 'Duplicates happen. oncely runs the work once.',
            model: 'summarizer-small',
            language: 'en',
            promptVersion: 'p3',
          },
          {},
        ),
    },
  ];
}

function printTable(results) {
  const header = [
    'route',
    'requests',
    '2xx',
    'executions',
    'shared/replayed',
    '409s',
    'other',
    'distinct executionIds',
    'business rows',
  ];
  const rows = results.map((r) =>
    [
      r.route,
      r.requests,
      r.ok,
      r.executions,
      r.ok - r.executions,
      r.conflicts,
      r.other,
      r.distinct,
      r.rows ?? '—',
    ].map(String),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
}

async function cleanUp(nodes, db, redis) {
  await Promise.allSettled(nodes.map(stopNode));
  await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  await db.end();
  redis.disconnect();
}

async function main_() {
  if (!existsSync(main)) throw new Error(`${main} is missing: run "npm run build" first.`);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  await redis.ping();
  await db.query(`CREATE SCHEMA "${schema}"`);
  const nodes = [];
  try {
    // The first node runs the migrations; the others start on the migrated schema.
    nodes.push(await startNode(0));
    nodes.push(
      ...(await Promise.all(Array.from({ length: NODES - 1 }, (_, i) => startNode(i + 1)))),
    );
    console.log(
      `${NODES} demo processes (pids ${nodes.map((n) => n.child.pid).join(', ')}) on Redis ${redisUrl} + PostgreSQL schema ${schema}; ${DUPLICATES} concurrent duplicates per route, ${LATENCY_MS} ms of simulated work each.\n`,
    );
    const results = [];
    for (const scenario of scenarios()) {
      const responses = await Promise.all(
        Array.from({ length: DUPLICATES }, (_, i) => scenario.send(nodes[i % NODES].url)),
      );
      const ok = responses.filter((r) => r.status >= 200 && r.status < 300);
      results.push({
        route: scenario.route,
        requests: responses.length,
        ok: ok.length,
        executions: await executionsOf(nodes, scenario.operation),
        conflicts: responses.filter((r) => r.status === 409).length,
        other: responses.filter((r) => !(r.status >= 200 && r.status < 300) && r.status !== 409)
          .length,
        distinct: new Set(ok.map((r) => r.executionId)).size,
        rows: scenario.rows ? await scenario.rows(db) : undefined,
      });
    }
    printTable(results);
    const failed = results.filter(
      (r) => r.executions !== 1 || r.distinct !== 1 || (r.rows ?? 1) !== 1,
    );
    if (failed.length > 0) {
      console.error(
        `\nFAILED: ${failed.map((r) => r.route).join(', ')} did not execute exactly once.`,
      );
      process.exitCode = 1;
    } else {
      console.log('\nOK: every route executed exactly once across the three processes.');
    }
  } finally {
    await cleanUp(nodes, db, redis);
  }
}

main_().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
