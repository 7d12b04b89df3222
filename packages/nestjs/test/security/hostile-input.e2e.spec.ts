import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { InMemoryRecordQuota, ProblemType } from '@oncely/core';
import { OncelyModule, type OncelyModuleOptions } from '@oncely/nestjs';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
// Shared with the Express suite, so both frameworks face the very same inputs and oracle.
import {
  inMemoryHostileBackend,
  redisPostgresHostileBackend,
  type HostileBackend,
} from '../../../express/test/security/hostile-backends.js';
import { post } from '../../../express/test/security/http-client.js';
import {
  hostileBody,
  hostileKeyHeader,
  injectionPiece,
  isValidPayBody,
  keyHeaderVerdict,
  pollutionBody,
  prototypeSnapshot,
} from '../../../express/test/security/hostile-inputs.js';
import { HostilePayController, PayExecutions } from './hostile-pay.controller.js';

const PROBLEM = 'application/problem+json';

async function startApp(options: OncelyModuleOptions) {
  const moduleRef = await Test.createTestingModule({
    imports: [OncelyModule.forRoot(options)],
    controllers: [HostilePayController],
    providers: [PayExecutions],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  const server = app.getHttpServer() as Server;
  const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { app, baseUrl, executions: app.get(PayExecutions) };
}

async function stopApp(app: INestApplication): Promise<void> {
  (app.getHttpServer() as Server).closeAllConnections();
  await app.close();
}

describe.each([
  ['in-memory', inMemoryHostileBackend(), { header: 250, body: 200, cross: 80 }],
  ['redis+postgres', redisPostgresHostileBackend(), { header: 100, body: 100, cross: 50 }],
] as const)('hostile input against the Nest module (%s)', (_name, makeBackend, runs) => {
  let backend: HostileBackend;
  let app: INestApplication;
  let baseUrl: string;
  let executions: PayExecutions;
  const prototypeBefore = prototypeSnapshot();

  beforeAll(async () => {
    backend = await makeBackend();
    ({ app, baseUrl, executions } = await startApp({
      namespace: `hostile-${randomUUID().slice(0, 8)}`,
      coordinator: backend.coordinator,
      store: backend.store,
      ...(backend.encryption && { encryption: backend.encryption }),
    }));
  });

  afterAll(async () => {
    await stopApp(app);
    await backend.stop();
  });

  afterEach(() => {
    expect(prototypeSnapshot()).toBe(prototypeBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('answers every Idempotency-Key value with 201 or a 400 problem, writing only for valid keys', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const accepted = new Set<string>();
    const [recordsBefore, executionsBefore] = [await backend.records(), executions.count];
    await fc.assert(
      fc.asyncProperty(hostileKeyHeader, async (header) => {
        const res = await post(baseUrl, '/pay', {
          headers: { 'x-tenant': tenant, 'idempotency-key': header },
          body: { orderId: 'o-1', amount: '10.00' },
        });
        if (res.status === 431) {
          // Node's HTTP server refuses headers over 16 KiB before Nest runs.
          expect(header.length).toBeGreaterThan(8 * 1024);
          return;
        }
        const verdict = keyHeaderVerdict(header);
        if (verdict.valid) {
          expect(res.status).toBe(201);
          expect(res.body.tenant).toBe(tenant);
          expect(res.headers['idempotent-replayed'] === 'true').toBe(accepted.has(verdict.key));
          accepted.add(verdict.key);
        } else {
          expect(res.status).toBe(400);
          expect(res.headers['content-type']).toContain(PROBLEM);
          expect(res.body.type).toBe(ProblemType.idempotencyKeyMalformed);
        }
      }),
      { numRuns: runs.header },
    );
    expect(executions.count - executionsBefore).toBe(accepted.size);
    expect((await backend.records()) - recordsBefore).toBe(accepted.size);
  });

  it('answers hostile bodies with 201, 400, 413 or 422 and never a 500, writing only for valid ones', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    let created = 0;
    const [recordsBefore, executionsBefore] = [await backend.records(), executions.count];
    await fc.assert(
      fc.asyncProperty(hostileBody, fc.constantFrom('/pay', '/echo'), async (text, path) => {
        const res = await post(baseUrl, path, {
          headers: { 'x-tenant': tenant, 'idempotency-key': randomUUID() },
          rawBody: text,
        });
        expect([201, 400, 413, 422]).toContain(res.status);
        if (res.status === 201) created += 1;
        if (Buffer.byteLength(text) > 100 * 1024) expect(res.status).toBe(413);
        if (text === '') {
          expect(res.status).toBe(path === '/echo' ? 201 : 400);
          return;
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          // Nest's body parser answers these itself (its own JSON error, not oncely's).
          expect([400, 413]).toContain(res.status);
          return;
        }
        const parsedByServer = typeof parsed === 'object' && parsed !== null && res.status !== 413;
        if (parsedByServer && res.status !== 201) {
          expect(res.headers['content-type']).toContain(PROBLEM);
        }
        if (path === '/pay' && parsedByServer) {
          expect(res.status).toBe(isValidPayBody(parsed) ? 201 : 400);
          if (res.status === 400) expect(res.body.type).toBe(ProblemType.invalidBody);
        }
      }),
      { numRuns: runs.body },
    );
    expect(executions.count - executionsBefore).toBe(created);
    expect((await backend.records()) - recordsBefore).toBe(created);
  });

  it('refuses a body nested 5000 deep with 400 before class-transformer overflows the stack', async () => {
    const depth = 5_000;
    for (const text of [
      '{"a":'.repeat(depth) + '1' + '}'.repeat(depth),
      `{"l":${'['.repeat(depth)}${']'.repeat(depth)}}`,
    ]) {
      const res = await post(baseUrl, '/pay', {
        headers: { 'x-tenant': 't-deep', 'idempotency-key': randomUUID() },
        rawBody: text,
      });
      expect(res.status).toBe(400);
      expect(res.body.type).toBe(ProblemType.invalidBody);
    }
  });

  it('keeps prototype-pollution payloads inert, through validation and replay', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    await fc.assert(
      fc.asyncProperty(pollutionBody, fc.constantFrom('/pay', '/echo'), async (text, path) => {
        const key = randomUUID();
        const send = () =>
          post(baseUrl, path, {
            headers: { 'x-tenant': tenant, 'idempotency-key': key },
            rawBody: text,
          });
        const first = await send();
        const valid = path === '/echo' || isValidPayBody(JSON.parse(text));
        expect(first.status).toBe(valid ? 201 : 400);
        const again = await send();
        expect(again.status).toBe(first.status);
        if (valid) {
          expect(again.headers['idempotent-replayed']).toBe('true');
          expect(again.body).toEqual(first.body);
        }
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: 40 },
    );
  });

  it("never serves one tenant another tenant's response, however keys and tenants are forged", async () => {
    const run = randomUUID().slice(0, 6);
    const [recordsBefore, executionsBefore] = [await backend.records(), executions.count];
    const identities = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        injectionPiece,
        injectionPiece,
        injectionPiece,
        fc.constantFrom(':', ',', '%3A', '%2C', '{', '}'),
        async (x, y, z, sep) => {
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
    expect(executions.count - executionsBefore).toBe(identities.size);
    expect((await backend.records()) - recordsBefore).toBe(identities.size);
  });

  it('refuses a key without a principal with 401 and writes nothing', async () => {
    const [recordsBefore, executionsBefore] = [await backend.records(), executions.count];
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
    expect(executions.count).toBe(executionsBefore);
    expect(await backend.records()).toBe(recordsBefore);
  });
});

describe('per-tenant record quota through OncelyModule', () => {
  it('answers 429 problem+json past the limit, still replays, and keeps tenants apart', async () => {
    const { app, baseUrl, executions } = await startApp({
      namespace: `quota-${randomUUID().slice(0, 8)}`,
      recordQuota: { quota: new InMemoryRecordQuota(), limit: 2, windowMs: 3_600_000 },
    });
    try {
      const pay = (tenant: string, key: string) =>
        post(baseUrl, '/pay', {
          headers: { 'x-tenant': tenant, 'idempotency-key': key },
          body: { orderId: 'o-1', amount: '10.00' },
        });
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
      expect(executions.count).toBe(3);
    } finally {
      await stopApp(app);
    }
  });
});
