import { InMemoryRecordQuota, InvalidBodyError, ProblemType } from '@oncely/core';
import { createOncely, type Oncely } from '@oncely/express';
import express, { type ErrorRequestHandler, type Express } from 'express';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import request from 'supertest';
import { post } from './http-client.js';
import {
  inMemoryHostileBackend,
  redisPostgresHostileBackend,
  type HostileBackend,
} from './hostile-backends.js';
import {
  hostileBody,
  hostileKeyHeader,
  injectionPiece,
  isValidPayBody,
  keyHeaderVerdict,
  pollutionBody,
  prototypeSnapshot,
} from './hostile-inputs.js';

const PROBLEM = 'application/problem+json';

function payApp(oncely: Oncely): { app: Express; executions: () => number } {
  const app = express();
  let executions = 0;
  app.use(express.json({ limit: '100kb' }));
  app.use((req, _res, next) => {
    const tenant = req.header('x-tenant');
    if (tenant !== undefined) (req as { user?: unknown }).user = { tenantId: tenant };
    next();
  });
  const common = { scope: 'user.tenantId', missingUserStatus: 401 as const };
  app.post(
    '/pay',
    oncely.idempotent({
      ...common,
      name: 'POST /pay',
      operation: 'pay',
      target: 'body.orderId',
      validate: (body) => {
        if (!isValidPayBody(body)) {
          throw new InvalidBodyError([{ property: 'body', messages: ['orderId and amount'] }]);
        }
        return { orderId: body.orderId, amount: body.amount };
      },
    }),
    (req, res) => {
      executions += 1;
      const { tenantId } = (req as { user?: { tenantId: string } }).user!;
      const body = req.body as { orderId: string; amount: string };
      res
        .status(201)
        .json({ tenant: tenantId, orderId: body.orderId, amount: body.amount, executions });
    },
  );
  // No validation: the whole parsed body, hostile as it is, goes into the fingerprint.
  app.post(
    '/echo',
    oncely.idempotent({ ...common, name: 'POST /echo', operation: 'echo' }),
    (req, res) => {
      executions += 1;
      res
        .status(201)
        .json({ tenant: (req as { user?: { tenantId: string } }).user!.tenantId, executions });
    },
  );
  const problems: ErrorRequestHandler = (
    error: { status?: number; type?: string },
    _req,
    res,
    _next,
  ) => {
    // body-parser's own refusals (bad JSON, too large); anything else is a bug: a 500.
    const status = typeof error.status === 'number' && error.status < 500 ? error.status : 500;
    res
      .status(status)
      .type(PROBLEM)
      .json({ type: `urn:test:${error.type ?? 'error'}`, status });
  };
  app.use(problems);
  return { app, executions: () => executions };
}

describe.each([
  ['in-memory', inMemoryHostileBackend(), { header: 250, body: 200, cross: 80 }],
  ['redis+postgres', redisPostgresHostileBackend(), { header: 100, body: 100, cross: 50 }],
] as const)('hostile input against the Express middleware (%s)', (_name, makeBackend, runs) => {
  let backend: HostileBackend;
  let oncely: Oncely;
  let server: Server;
  let executions: () => number;
  let baseUrl: string;
  const prototypeBefore = prototypeSnapshot();

  beforeAll(async () => {
    backend = await makeBackend();
    oncely = createOncely({
      namespace: `hostile-${randomUUID().slice(0, 8)}`,
      coordinator: backend.coordinator,
      store: backend.store,
      ...(backend.encryption && { encryption: backend.encryption }),
    });
    const built = payApp(oncely);
    executions = built.executions;
    server = built.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await oncely.close();
    await backend.stop();
  });

  afterEach(() => {
    expect(prototypeSnapshot()).toBe(prototypeBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('answers every Idempotency-Key value with 201 or a 400 problem, writing only for valid keys', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const accepted = new Set<string>();
    const [recordsBefore, executionsBefore] = [await backend.records(), executions()];
    await fc.assert(
      fc.asyncProperty(hostileKeyHeader, async (header) => {
        const res = await post(baseUrl, '/pay', {
          headers: { 'x-tenant': tenant, 'idempotency-key': header },
          body: { orderId: 'o-1', amount: '10.00' },
        });
        const verdict = keyHeaderVerdict(header);
        if (res.status === 431) {
          // Node's HTTP server refuses headers over 16 KiB before any middleware runs.
          expect(header.length).toBeGreaterThan(8 * 1024);
          return;
        }
        if (verdict.valid) {
          expect(res.status).toBe(201);
          expect(res.body.tenant).toBe(tenant);
          expect(res.headers['idempotent-replayed'] === 'true').toBe(accepted.has(verdict.key));
          accepted.add(verdict.key);
        } else {
          expect(res.status).toBe(400);
          expect(res.headers['content-type']).toContain(PROBLEM);
          expect(res.body.type).toBe(ProblemType.idempotencyKeyMalformed);
          expect(JSON.stringify(res.body)).not.toContain(header.length > 8 ? header : '\u0000');
        }
      }),
      { numRuns: runs.header },
    );
    expect(executions() - executionsBefore).toBe(accepted.size);
    expect((await backend.records()) - recordsBefore).toBe(accepted.size);
  });

  it('answers hostile bodies with 201, 400, 413 or 422 and never a 500, writing only for valid ones', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    let created = 0;
    const [recordsBefore, executionsBefore] = [await backend.records(), executions()];
    await fc.assert(
      fc.asyncProperty(hostileBody, fc.constantFrom('/pay', '/echo'), async (text, path) => {
        const res = await post(baseUrl, path, {
          headers: { 'x-tenant': tenant, 'idempotency-key': randomUUID() },
          rawBody: text,
        });
        expect([201, 400, 413, 422]).toContain(res.status);
        expect(res.headers['content-type']).toContain(
          res.status === 201 ? 'application/json' : PROBLEM,
        );
        if (res.status === 201) created += 1;
        if (Buffer.byteLength(text) > 100 * 1024) expect(res.status).toBe(413);
        if (text === '') {
          // No body at all: `/echo` keys on nothing, `/pay` misses its fields.
          expect(res.status).toBe(path === '/echo' ? 201 : 400);
          return;
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          expect(res.status).toBe(res.status === 413 ? 413 : 400);
          return;
        }
        if (
          path === '/pay' &&
          res.status !== 413 &&
          typeof parsed === 'object' &&
          parsed !== null
        ) {
          expect(res.status).toBe(isValidPayBody(parsed) ? 201 : 400);
          if (res.status === 400) expect(res.body.type).toBe(ProblemType.invalidBody);
        }
      }),
      { numRuns: runs.body },
    );
    expect(executions() - executionsBefore).toBe(created);
    expect((await backend.records()) - recordsBefore).toBe(created);
  });

  it('keeps prototype-pollution payloads inert and replays them as sent', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    await fc.assert(
      fc.asyncProperty(pollutionBody, async (text) => {
        const key = randomUUID();
        const send = () =>
          post(baseUrl, '/echo', {
            headers: { 'x-tenant': tenant, 'idempotency-key': key },
            rawBody: text,
          });
        const first = await send();
        expect(first.status).toBe(201);
        const again = await send();
        expect(again.status).toBe(201);
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(again.body).toEqual(first.body);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: 30 },
    );
  });

  it("never serves one tenant another tenant's response, however keys and tenants are forged", async () => {
    const run = randomUUID().slice(0, 6);
    const [recordsBefore, executionsBefore] = [await backend.records(), executions()];
    const identities = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        injectionPiece,
        injectionPiece,
        injectionPiece,
        fc.constantFrom(':', ',', '%3A', '%2C', '{', '}'),
        async (x, y, z, sep) => {
          // Tenant "x<sep>y" with key "z" against tenant "x" with key "y<sep>z", and the same key
          // sent by another tenant (a guessed or leaked key).
          const attempts = [
            { tenant: `${run}${x}${sep}${y}`, key: z },
            { tenant: `${run}${x}`, key: `${y}${sep}${z}` },
            { tenant: `${run}${x}`, key: z },
          ];
          for (const { tenant, key } of attempts) {
            const res = await post(baseUrl, '/pay', {
              headers: { 'x-tenant': tenant, 'idempotency-key': `"${key}"` },
              body: { orderId: 'o-1', amount: '10.00' },
            });
            expect(res.status).toBe(201);
            expect(res.body.tenant).toBe(tenant);
            const identity = JSON.stringify([tenant, key]);
            expect(res.headers['idempotent-replayed'] === 'true').toBe(identities.has(identity));
            identities.add(identity);
          }
        },
      ),
      { numRuns: runs.cross },
    );
    expect(executions() - executionsBefore).toBe(identities.size);
    expect((await backend.records()) - recordsBefore).toBe(identities.size);
  });

  it('refuses a key without a principal with 401 and writes nothing', async () => {
    const [recordsBefore, executionsBefore] = [await backend.records(), executions()];
    await fc.assert(
      fc.asyncProperty(fc.uuid(), async (key) => {
        const res = await post(baseUrl, '/pay', {
          headers: { 'idempotency-key': key },
          body: { orderId: 'o-1', amount: '10.00' },
        });
        expect(res.status).toBe(401);
        expect(res.body.type).toBe(ProblemType.unauthenticated);
      }),
      { numRuns: 50 },
    );
    expect(executions()).toBe(executionsBefore);
    expect(await backend.records()).toBe(recordsBefore);
  });
});

describe('per-tenant record quota through createOncely()', () => {
  it('answers 429 problem+json past the limit, still replays, and keeps tenants apart', async () => {
    const oncely = createOncely({
      namespace: `quota-${randomUUID().slice(0, 8)}`,
      recordQuota: { quota: new InMemoryRecordQuota(), limit: 2, windowMs: 3_600_000 },
    });
    const { app, executions } = payApp(oncely);
    const pay = (tenant: string, key: string) =>
      request(app)
        .post('/pay')
        .set('x-tenant', tenant)
        .set('idempotency-key', key)
        .send({ orderId: 'o-1', amount: '10.00' });
    expect((await pay('a', 'k1')).status).toBe(201);
    expect((await pay('a', 'k2')).status).toBe(201);
    const refused = await pay('a', 'k3');
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toContain(PROBLEM);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.body.type).toBe(ProblemType.recordQuotaExceeded);
    const replay = await pay('a', 'k1');
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((await pay('b', 'k3')).status).toBe(201);
    expect(executions()).toBe(3);
    await oncely.close();
  });
});
