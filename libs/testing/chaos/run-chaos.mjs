#!/usr/bin/env node
// npm run test:chaos [-- scenario …] — the fault scenarios and the soak, one after the other,
// each on its own redis-server(s) and PostgreSQL database, then a summary table. Exits 1 when
// any scenario broke the invariant. Needs the built demo (npm run build), PostgreSQL
// (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test, allowed to CREATE DATABASE)
// and, for rabbitmq-consumer-kill, RabbitMQ (RABBITMQ_HOST / RABBITMQ_PORT, default 127.0.0.1:5672).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stopAllRedisServers } from '@oncely/testing-kit';
import { scenarios } from './scenarios.mjs';

const demo = fileURLToPath(new URL('../../../apps/demo/dist/demo.module.js', import.meta.url));
if (!existsSync(demo)) {
  console.error(`${demo} is missing: run "npm run build" first.`);
  process.exit(1);
}

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !(name in scenarios));
if (unknown.length > 0) {
  console.error(
    `Unknown scenario(s) ${unknown.join(', ')}; known: ${Object.keys(scenarios).join(', ')}`,
  );
  process.exit(1);
}

const started = Date.now();
const rows = [];
for (const name of wanted.length > 0 ? wanted : Object.keys(scenarios)) {
  process.stdout.write(`▶ ${name} … `);
  const row = await scenarios[name]();
  rows.push(row);
  console.log(`${row.failures.length === 0 ? 'ok' : 'FAILED'} (${row.seconds} s)`);
  for (const failure of row.failures.slice(0, 15)) console.log(`    ✗ ${failure}`);
  if (row.failures.length > 15) console.log(`    … ${row.failures.length - 15} more`);
  for (const [error, n] of Object.entries(row.serverErrors ?? {})) {
    console.log(`    500 × ${n}: ${error}`);
  }
}

// Each scenario stopped its servers; this also removes their temporary directories.
await stopAllRedisServers();

const header = [
  'scenario',
  'requests',
  'duplicates',
  'late retries',
  'operations',
  'business rows',
  'executions',
  'answers by status',
  'faults',
  's',
  'result',
];
const table = rows.map((r) =>
  [
    r.scenario,
    r.sent,
    r.duplicates,
    r.lateRetries,
    r.operations ?? '—',
    r.rows ?? '—',
    r.executions ?? '—',
    Object.entries(r.byStatus)
      .sort()
      .map(([status, n]) => `${status}:${n}`)
      .join(' '),
    r.faults,
    r.seconds,
    r.failures.length === 0 ? 'PASS' : 'FAIL',
  ].map(String),
);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
console.log(`\n${line(header)}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const row of table) console.log(line(row));
for (const r of rows) if (r.notes) console.log(`  ${r.scenario}: ${r.notes}`);
const total = (field) => rows.reduce((sum, r) => sum + (Number(r[field]) || 0), 0);
console.log(
  `\n${total('sent')} requests (${total('duplicates')} duplicates + ${total('lateRetries')} late retries), ${total('operations')} operations, ${total('rows')} business rows, ${total('executions')} executions, ${total('faults')} faults injected, ${Math.round((Date.now() - started) / 1000)} s.`,
);
const failed = rows.filter((r) => r.failures.length > 0);
if (failed.length > 0) {
  console.error(`FAILED: ${failed.map((r) => r.scenario).join(', ')}`);
  process.exitCode = 1;
} else {
  console.log(
    'OK: every operation took effect exactly once; every answer was its result or a retryable 409/503.',
  );
}
