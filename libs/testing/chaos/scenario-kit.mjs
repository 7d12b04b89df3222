// What every scenario run through `scenario()` gets: its own PostgreSQL database, its own
// redis-server (or 3-master cluster) on spare loopback ports, three demo processes, a ledger, and
// a clean-up that runs even when the scenario throws.
import { randomBytes } from 'node:crypto';
import { startRedisCluster, startRedisServer } from '@oncely/testing-kit';
import pg from 'pg';
import { startFleet } from './demo-fleet.mjs';
import { Ledger } from './traffic.mjs';

const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const run = randomBytes(3).toString('hex');
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `body(context)` with fresh infrastructure; `redis` is `'single'` or `'cluster'`, `env` the
 * chaos node's overrides. Returns the scenario's row for the summary table.
 */
export async function scenario(name, { redis = 'single', env = {} }, body) {
  const started = Date.now();
  const { database, admin, url, create, drop } = await scenarioDatabase(name);
  let db;
  let servers = [];
  let fleet;
  const ledger = new Ledger();
  const row = { scenario: name, faults: 0, failures: [] };
  try {
    db = await create();
    servers =
      redis === 'cluster' ? [...(await startRedisCluster()).servers] : [await startRedisServer()];
    const redisEnv =
      redis === 'cluster'
        ? { CHAOS_REDIS_CLUSTER: servers.map((s) => `${s.host}:${s.port}`).join(',') }
        : { REDIS_URL: `redis://${servers[0].host}:${servers[0].port}` };
    fleet = await startFleet({
      name,
      env: {
        DATABASE_URL: url,
        ONCELY_REDIS_PREFIX: `chaos-${run}:`,
        ...redisEnv,
        ...env,
      },
    });
    const context = { fleet, ledger, db, database, admin, servers, row, url };
    const checks = await body(context);
    const verdict = await ledger.verify({
      db,
      schema: 'public',
      executions: fleet.executions(),
      ...checks,
    });
    row.failures.push(...verdict.failures, ...(checks.failures ?? []));
    row.serverErrors = serverErrors(fleet);
    Object.assign(row, {
      operations: verdict.operations,
      rows: verdict.rows,
      executions: verdict.executions,
      notes: checks.notes ?? '',
    });
  } catch (error) {
    row.failures.push(`scenario error: ${error?.stack ?? error}`);
  } finally {
    await fleet?.stop().catch(() => {});
    await Promise.all(servers.map((s) => s.stop().catch(() => {})));
    await db?.end().catch(() => {});
    await drop();
  }
  Object.assign(row, {
    sent: ledger.sent,
    duplicates: ledger.duplicates,
    lateRetries: ledger.lateRetries,
    byStatus: ledger.byStatus,
    seconds: Math.round((Date.now() - started) / 1000),
  });
  return row;
}

/**
 * Scenario `name`'s own PostgreSQL database, `oncely_chaos_<run>_<name>`: `create()` creates it
 * and opens a client on it, `drop()` removes it with every connection to it.
 */
export async function scenarioDatabase(name) {
  const database = `oncely_chaos_${run}_${name.replace(/-/g, '_')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return {
    database,
    admin,
    url: url.toString(),
    async create() {
      await admin.query(`CREATE DATABASE "${database}"`);
      const db = new pg.Client({ connectionString: url.toString() });
      await db.connect();
      return db;
    },
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch(() => {});
      await admin.end().catch(() => {});
    },
  };
}

/** The demo's logged unexpected errors (the 500s), by message and the first oncely frame. */
function serverErrors(fleet) {
  const counts = {};
  for (const text of fleet.outputs()) {
    // eslint-disable-next-line no-control-regex
    const lines = text.replace(/\x1b\[[0-9;]*m/g, '').split('\n');
    lines.forEach((line, i) => {
      const error = /ERROR \[\w+\] (.*)$/.exec(line);
      if (!error) return;
      const frame = lines
        .slice(i + 1, i + 30)
        .find((l) => /packages\/(core|nestjs|typeorm|redis)\//.test(l));
      const where = frame
        ? frame
            .trim()
            .replace(/^at /, '')
            .replace(/\(?file:\/\/\S*\/packages\//, '(')
        : '';
      const key = `${error[1].slice(0, 120)} ${where}`;
      counts[key] = (counts[key] ?? 0) + 1;
    });
  }
  return counts;
}
