import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { LeaseLostError, type StoredResponse } from '@oncely/core';
import { RedisFlightCoordinator, RedisIdempotencyRecordStore } from '@oncely/redis';
import { startRedisCluster, stopAllRedisServers, type RedisCluster } from '@oncely/testing-kit';
import { Cluster } from 'ioredis';
import { oncelyWith } from './fixtures/cli-session.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const digest = 'b'.repeat(64);
const options = { leaseTtlMs: 30_000, retentionMs: 60_000, owner: 'refunds-api' };
const response: StoredResponse = {
  status: 200,
  headers: {},
  body: { kind: 'json', value: { refunded: true } },
};

/** The operator commands against a 3-master Redis Cluster holding records and SingleFlight state. */
describe('oncely keys, inspect, release and purge on a 3-master Redis Cluster', () => {
  let cluster: RedisCluster;
  let client: Cluster;
  let store: RedisIdempotencyRecordStore;
  let coordinator: RedisFlightCoordinator;
  const keyPrefix = `cli-${randomBytes(4).toString('hex')}:`;
  let connection: string[];
  const run = (...args: string[]) => oncelyWith({ cwd: root }, ...args, ...connection);
  const json = async (...args: string[]) => {
    const result = await run(...args, '--json');
    expect(result).toMatchObject({ code: 0, err: '' });
    return JSON.parse(result.out) as Record<string, unknown>;
  };
  const begin = async (identity: string) => {
    const outcome = await store.begin(identity, digest, options);
    if (outcome.kind !== 'acquired') throw new Error(`expected acquired, got ${outcome.kind}`);
    return outcome.lease;
  };
  const identities = Array.from({ length: 60 }, (_, i) => `shop:refund:v1:t-${i % 7}:r-${i}`);

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    client = new Cluster([...cluster.nodes]);
    store = new RedisIdempotencyRecordStore(client, { keyPrefix });
    coordinator = new RedisFlightCoordinator(client, { keyPrefix });
    const seeds = cluster.nodes.map(({ host, port }) => `redis://${host}:${port}`);
    // One seed repeated, the others comma-separated: both forms are read.
    connection = ['--redis', seeds[0]!, '--redis', seeds.slice(1).join(','), '--cluster'];
    connection.push('--key-prefix', keyPrefix);
    for (const [i, identity] of identities.entries()) {
      const lease = await begin(identity);
      if (i % 2 === 0) await store.complete(lease, response);
    }
    await begin('shop:refund:v2:t-0:r-0');
    await begin('shop:refunds:v1:t-0:r-0');
  });

  afterAll(async () => {
    await coordinator?.close();
    await client?.quit();
    await stopAllRedisServers();
  });

  it('keys SCANs every master and lists exactly the records written', async () => {
    const perMaster = await Promise.all(client.nodes('master').map((node) => node.dbsize()));
    expect(perMaster.filter((count) => count > 0)).toHaveLength(3);

    const listing = await json('keys', 'shop:refund:v1');
    const records = listing.records as Array<{ identity: string; state: string; owner: string }>;
    expect(records.map((record) => record.identity)).toEqual([...identities].sort());
    expect(records.filter((record) => record.state === 'completed')).toHaveLength(30);
    expect(new Set(records.map((record) => record.owner))).toEqual(new Set(['refunds-api']));
    expect(listing.flights).toEqual([]);
    expect(((await json('keys', 'shop:refund')).records as unknown[]).length).toBe(61);
  });

  it('inspect shows the record and, for a whole key, its SingleFlight state', async () => {
    const key = 'shop:report:v1:t-1:monthly:9a8b7c';
    expect((await coordinator.acquire(key, 'owner-token-1', 20_000)).kind).toBe('leader');
    const cachedKey = 'shop:report:v1:t-1:weekly:9a8b7c';
    await coordinator.acquire(cachedKey, 'owner-token-2', 20_000);
    await coordinator.complete(cachedKey, 'owner-token-2', {
      kind: 'result',
      payload: '{"rows":3}',
      ttlMs: 30_000,
    });

    const inspected = await json('inspect', key);
    expect(inspected).toMatchObject({
      target: 'key',
      record: { state: 'absent' },
      flight: { key, state: 'leading', holder: 'owner-token-1' },
    });
    expect((await json('inspect', cachedKey)).flight).toMatchObject({ state: 'cached', bytes: 10 });
    expect((await json('keys', 'shop:report:v1')).flights).toMatchObject([
      { key, state: 'leading' },
      { key: cachedKey, state: 'cached' },
    ]);
    expect((await json('inspect', `${identities[1]}:ffee`)).record).toMatchObject({
      identity: identities[1],
      state: 'in_progress',
      owner: 'refunds-api',
    });
    await coordinator.release(key, 'owner-token-1');
  });

  it('release bumps the fence and frees the SingleFlight lease: the retry runs again', async () => {
    const identity = 'shop:refund:v1:t-9:stuck';
    const key = `${identity}:c0ffee`;
    const stuck = await begin(identity);
    const lead = await coordinator.acquire(key, 'owner-token-3', 20_000);
    expect(lead.kind).toBe('leader');

    const refused = await run('release', key);
    expect(refused.code).toBe(2);
    expect(await json('release', key, '--yes')).toEqual({
      target: 'key',
      identity,
      record: 'released',
      fence: stuck.fence,
      leases: ['flight'],
    });
    await expect(store.complete(stuck, response)).rejects.toThrow(LeaseLostError);
    const retry = await begin(identity);
    expect(retry.fence).toBeGreaterThan(stuck.fence);
    const again = await coordinator.acquire(key, 'owner-token-4', 20_000);
    expect(again.kind === 'leader' && lead.kind === 'leader' && again.fence > lead.fence).toBe(
      true,
    );
    await coordinator.release(key, 'owner-token-4');
  });

  it('purge deletes records and cached results of a key or an operation: the retry runs again', async () => {
    const key = `${identities[0]}:abcdef`;
    await coordinator.acquire(key, 'owner-token-5', 20_000);
    await coordinator.complete(key, 'owner-token-5', {
      kind: 'result',
      payload: '1',
      ttlMs: 30_000,
    });
    expect(await json('purge', key, '--yes')).toEqual({
      target: 'key',
      name: key,
      records: 1,
      flights: 1,
    });
    expect((await store.begin(identities[0]!, digest, options)).kind).toBe('acquired');
    expect((await coordinator.acquire(key, 'owner-token-6', 20_000)).kind).toBe('leader');
    await coordinator.release(key, 'owner-token-6');

    expect(await json('purge', 'shop:refund:v1', '--yes')).toEqual({
      target: 'operation',
      name: 'shop:refund:v1',
      records: 61,
      flights: 0,
    });
    expect((await json('keys', 'shop:refund:v1')).records).toEqual([]);
    expect((await store.begin(identities[2]!, digest, options)).kind).toBe('acquired');
    expect(await json('purge', '--expired')).toMatchObject({
      expired: true,
      store: 'redis',
      purged: 0,
    });
  });

  it('runs as a process: JSON on stdout, and no confirmation without a terminal', async () => {
    const oncely = (...args: string[]) =>
      promisify(execFile)(
        process.execPath,
        [
          '--import',
          join(root, 'packages/nestjs/test/support/swc-register.mjs'),
          join(root, 'packages/cli/src/bin/oncely.ts'),
          ...args,
          ...connection,
        ],
        { cwd: root, env: { ...process.env, NODE_OPTIONS: '' } },
      ).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );

    const listed = await oncely('keys', 'shop:refunds:v1', '--json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({
      operation: 'shop:refunds:v1',
      records: [{ identity: 'shop:refunds:v1:t-0:r-0', state: 'in_progress' }],
    });
    const refused = await oncely('purge', 'shop:refunds:v1');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/Refused: no terminal to confirm on/);
    expect(((await json('keys', 'shop:refunds:v1')).records as unknown[]).length).toBe(1);
  });
});
