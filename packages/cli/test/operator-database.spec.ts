import { LeaseLostError, type StoredResponse } from '@oncely/core';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import { fileURLToPath } from 'node:url';
import { oncelyWith } from './fixtures/cli-session.js';
import { createRecordSchema, type RecordSchema } from './fixtures/record-schema.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const digest = 'a'.repeat(64);
const options = { leaseTtlMs: 30_000, retentionMs: 60_000, owner: 'payments-api' };
const response: StoredResponse = {
  status: 201,
  headers: { location: '/payments/p-1' },
  body: { kind: 'json', value: { id: 'p-1', card: '4111111111111111' } },
};

/** The operator commands against records in PostgreSQL of an app with no Redis coordinator. */
describe('oncely keys, inspect, release and purge on PostgreSQL records', () => {
  let schema: RecordSchema;
  let store: TypeOrmIdempotencyRecordStore;
  const run = (...args: string[]) => oncelyWith({ cwd: root }, ...args, '--database', schema.url);
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

  beforeAll(async () => {
    schema = await createRecordSchema();
    store = new TypeOrmIdempotencyRecordStore(schema.dataSource);
  });
  afterAll(() => schema?.drop());

  it('keys lists exactly the records of an operation, in a table or as JSON', async () => {
    const identities = Array.from({ length: 7 }, (_, i) => `shop:pay:v1:t-1:order-${i}`);
    for (const [i, identity] of identities.entries()) {
      const lease = await begin(identity);
      if (i < 4) await store.complete(lease, response);
    }
    await begin('shop:pay:v2:t-1:order-0');
    await begin('shop:payout:v1:t-1:order-0');

    const listing = await json('keys', 'shop:pay:v1');
    expect(listing).toEqual({
      operation: 'shop:pay:v1',
      records: identities.map((identity, i) => ({
        identity,
        keyHash: expect.stringMatching(/^[0-9a-f]{64}$/) as string,
        state: i < 4 ? 'completed' : 'in_progress',
        owner: 'payments-api',
        expiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/) as string,
      })),
      flights: null,
    });
    expect(((await json('keys', 'shop:pay')).records as unknown[]).length).toBe(8);

    const table = await run('keys', 'shop:pay:v1');
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/^Records of shop:pay:v1 \(7\):\nIDENTITY +STATE +OWNER +EXPIRES\n/);
    expect(table.out).toContain('shop:pay:v1:t-1:order-0  completed    payments-api');
    expect(table.out).toContain('SingleFlight keys not listed: give --redis');
  });

  it('inspect shows state, owner, fence and expiry, the body only with --show-body', async () => {
    const record = await json('inspect', 'shop:pay:v1:t-1:order-0:0f1e2d3c');
    expect(record).toMatchObject({
      target: 'key',
      key: 'shop:pay:v1:t-1:order-0:0f1e2d3c',
      record: {
        identity: 'shop:pay:v1:t-1:order-0',
        state: 'completed',
        owner: 'payments-api',
        fence: 1,
        fingerprint: digest,
        leaseExpiresAt: null,
        response: { status: 201, bodyKind: 'json', bodyBytes: 38 },
      },
      flight: null,
    });
    const { ttlMs, response: shown } = record.record as { ttlMs: number; response: object };
    expect(ttlMs).toBeGreaterThan(50_000);
    expect(shown).not.toHaveProperty('body');
    expect(JSON.stringify(record)).not.toContain('4111');

    const withBody = await json('inspect', 'shop:pay:v1:t-1:order-0', '--show-body');
    expect(withBody.record).toMatchObject({
      response: {
        headers: { location: '/payments/p-1' },
        body: response.body.kind === 'json' && response.body.value,
      },
    });

    const held = await run('inspect', 'shop:pay:v1:t-1:order-5');
    expect(held.out).toMatch(/^identity: +shop:pay:v1:t-1:order-5\n/);
    expect(held.out).toMatch(
      /\nstate: +in_progress\nowner: +payments-api\nfence: +1\nlease expires: +\S+Z \(in \d+s\)\n/,
    );
    expect(held.out).not.toContain('4111');
    expect((await json('inspect', 'shop:pay:v1:t-1:nothing')).record).toMatchObject({
      state: 'absent',
      owner: null,
      fence: null,
    });
  });

  it('release --no-redis asks first, refuses without a terminal or --yes, then bumps the fence: a retry runs again', async () => {
    const identity = 'shop:pay:v1:t-2:stuck';
    const stuck = await begin(identity);

    const refused = await run('release', identity, '--no-redis');
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/Refused: no terminal to confirm on\. Run it again with --yes/);
    const questions: string[] = [];
    const declined = await oncelyWith(
      { cwd: root, confirm: async (question) => (questions.push(question), false) },
      'release',
      identity,
      '--database',
      schema.url,
      '--no-redis',
    );
    expect(declined).toMatchObject({ code: 2, err: 'Cancelled.\n' });
    expect(questions).toEqual([expect.stringMatching(/^Force-release shop:pay:v1:t-2:stuck\? /)]);
    expect((await store.begin(identity, digest, options)).kind).toBe('in_progress');

    const released = await oncelyWith(
      { cwd: root, confirm: async () => true },
      'release',
      identity,
      '--database',
      schema.url,
      '--no-redis',
      '--json',
    );
    expect(released.code).toBe(0);
    expect(JSON.parse(released.out)).toEqual({
      target: 'identity',
      identity,
      record: 'released',
      fence: stuck.fence,
      leases: null,
    });
    await expect(store.complete(stuck, response)).rejects.toThrow(LeaseLostError);
    const retry = await begin(identity);
    expect(retry.fence).toBeGreaterThan(stuck.fence);
    expect((await json('inspect', identity)).record).toMatchObject({
      state: 'in_progress',
      fence: retry.fence,
    });

    expect((await run('release', 'shop:pay:v1:t-1:order-0', '--yes', '--no-redis')).out).toMatch(
      /^shop:pay:v1:t-1:order-0 is completed: its record is left alone/,
    );
    expect((await run('release', 'shop:pay:v1', '--yes', '--no-redis')).err).toMatch(
      /^"shop:pay:v1" is not a business key \(ns:op:ver:scope:target:fingerprint\) or an identity \(ns:op:ver:scope:target\)\./,
    );
  });

  it('purge --no-redis deletes a key or an operation after confirmation, and expired records: the retry runs again', async () => {
    expect((await run('purge', 'shop:pay:v1:t-1:order-1', '--no-redis')).code).toBe(2);
    expect(await json('purge', 'shop:pay:v1:t-1:order-1:ff00', '--yes', '--no-redis')).toEqual({
      target: 'key',
      name: 'shop:pay:v1:t-1:order-1:ff00',
      records: 1,
      flights: null,
    });
    const again = await begin('shop:pay:v1:t-1:order-1');
    expect(again.fence).toBe(1);

    const listed = (await json('keys', 'shop:pay:v1')).records as unknown[];
    const purged = await json('purge', 'shop:pay:v1', '--yes', '--no-redis');
    expect(purged).toEqual({
      target: 'operation',
      name: 'shop:pay:v1',
      records: listed.length,
      flights: null,
    });
    expect((await json('keys', 'shop:pay:v1')).records).toEqual([]);
    expect(((await json('keys', 'shop:pay')).records as unknown[]).length).toBe(1);
    expect((await store.begin('shop:pay:v1:t-1:order-0', digest, options)).kind).toBe('acquired');

    const shortOptions = { ...options, leaseTtlMs: 1, retentionMs: 1 };
    for (let i = 0; i < 3; i++) await store.begin(`shop:old:v1:t:${i}`, digest, shortOptions);
    await new Promise((done) => setTimeout(done, 20));
    expect(await json('purge', '--expired')).toEqual({
      expired: true,
      store: 'database',
      purged: 3,
    });
    expect((await run('purge', '--expired', 'shop:pay:v1')).err).toMatch(
      /^Give either --expired or a target/,
    );
  });

  it('reads its connection from the environment, and says what is missing', async () => {
    const fromEnv = await oncelyWith(
      { cwd: root, env: { ONCELY_DATABASE_URL: schema.url } },
      'keys',
      'shop:payout:v1',
      '--json',
    );
    expect(JSON.parse(fromEnv.out)).toMatchObject({
      records: [{ identity: 'shop:payout:v1:t-1:order-0' }],
    });

    const none = await oncelyWith({ cwd: root }, 'keys', 'shop:pay:v1');
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/^Name where the records are: --redis <url> or --database <url>/);
    const two = await oncelyWith(
      { cwd: root },
      'keys',
      'shop:pay:v1',
      '--redis',
      'redis://a:1,redis://b:2',
    );
    expect(two.err).toMatch(/^2 Redis URLs were given: add --cluster/);
    const badScheme = await oncelyWith(
      { cwd: root },
      'keys',
      'shop:pay:v1',
      '--database',
      'mongodb://x',
    );
    expect(badScheme.err).toMatch(/^--database mongodb:\/\/ is not supported/);
  });
});
