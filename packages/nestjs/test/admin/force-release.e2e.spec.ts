import { Body, Controller, Inject, Post, UseGuards, type INestApplication } from '@nestjs/common';
import { OncelyAdmin, ProblemType } from '@oncely/core';
import { IdempotencyManager, IdempotentKey } from '@oncely/nestjs';
import { TypeOrmIdempotencyRecordAdmin } from '@oncely/typeorm';
import { IsString } from 'class-validator';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { EntityManager } from 'typeorm';
import { DataSource } from 'typeorm';
import { HeaderAuthGuard } from '../fixtures/orders.controller.js';
import { createTestApp, Executions, Gates } from '../fixtures/test-app.js';
import { SharedBackends, writeEffect } from '../support/shared-backends.js';

const SCHEMA = Symbol('schema');

class PaymentDto {
  @IsString()
  ref!: string;
}

/** The first run of each payment waits at its gate; any later run goes straight through. */
@Controller('payments')
@UseGuards(HeaderAuthGuard)
class StuckPaymentsController {
  constructor(
    @Inject(Executions) private readonly executions: Executions,
    @Inject(Gates) private readonly gates: Gates,
    @Inject(DataSource) private readonly source: DataSource,
    @Inject(SCHEMA) private readonly schema: string,
  ) {}

  @Post()
  @IdempotentKey({ operation: 'pay', scope: 'user.tenantId' })
  async pay(@Body() dto: PaymentDto): Promise<{ ref: string; run: number }> {
    const run = this.executions.hit(dto.ref);
    await writeEffect(this.source, this.schema, dto.ref, run);
    if (run === 1) await this.gates.pass(dto.ref);
    return { ref: dto.ref, run };
  }

  @Post('in-transaction')
  @IdempotentKey({ operation: 'pay-tx', scope: 'user.tenantId', transactional: true })
  async payInTransaction(
    @Body() dto: PaymentDto,
    @IdempotencyManager() manager: EntityManager,
  ): Promise<{ ref: string; run: number }> {
    const run = this.executions.hit(dto.ref);
    await manager.query(`INSERT INTO "${this.schema}"."effects" (ref, amount) VALUES ($1, $2)`, [
      dto.ref,
      run,
    ]);
    if (run === 1) await this.gates.pass(dto.ref);
    return { ref: dto.ref, run };
  }
}

describe('OncelyAdmin.forceRelease of a key whose handler still runs (Redis + PostgreSQL)', () => {
  const backends = new SharedBackends();
  let app: INestApplication;
  let admin: OncelyAdmin;
  let node: Awaited<ReturnType<SharedBackends['node']>>;

  beforeAll(async () => {
    await backends.start();
    node = await backends.node();
    const { options, source } = node;
    app = await createTestApp('express', options, [StuckPaymentsController], {
      providers: [
        { provide: DataSource, useValue: source },
        { provide: SCHEMA, useValue: backends.schema.name },
      ],
    });
    admin = new OncelyAdmin(options.store!, {
      admin: new TypeOrmIdempotencyRecordAdmin(source),
      coordinator: options.coordinator!,
    });
  });

  afterAll(async () => {
    await app?.close();
    await backends.stop();
  });

  const post = (path: string, key: string, ref: string) =>
    request(app.getHttpServer())
      .post(path)
      .set('x-tenant', 't-1')
      .set('idempotency-key', key)
      .send({ ref });

  /** The identity of the record the refused duplicate met, from its `conflict` event. */
  function identityOfConflict(operation: string): string {
    const conflict = backends.events.findLast(
      (event) => event.outcome === 'conflict' && event.operation?.includes(`:${operation}:`),
    );
    if (!conflict) throw new Error(`no conflict event for ${operation}`);
    return conflict.key;
  }

  it.each([
    ['/payments', 'pay', 'its effect stays, as on any lost lease', 2],
    ['/payments/in-transaction', 'pay-tx', 'its transaction is ended and its row rolled back', 1],
  ])(
    '%s: frees the record and the guard lease at once; the retry runs, the old handler confirms nothing (%s)',
    async (path, operation, _what, effectRows) => {
      const key = randomUUID();
      const ref = randomUUID();
      const stuck = post(path, key, ref).then((response) => response);
      await app.get(Gates).entered$(ref);
      const refused = await post(path, key, ref);
      expect(refused.status).toBe(409);

      // Awaited while the old handler is still held at its gate: it must not wait for it.
      const released = await admin.forceRelease(identityOfConflict(operation));
      expect(released).toMatchObject({ kind: 'released', leases: ['guard'] });

      const retried = await post(path, key, ref);
      expect(retried.status).toBe(201);
      expect(retried.body).toEqual({ ref, run: 2 });
      expect(retried.headers['idempotent-replayed']).toBeUndefined();

      app.get(Gates).open(ref);
      const old = await stuck;
      expect(old.status).toBe(503);
      expect(old.body.type).toBe(ProblemType.leaseLost);
      // Not "raise leaseTtl": the lease did not run out, an operator took it away.
      expect(old.body.detail).toMatch(
        new RegExp(
          `^The lease on "${identityOfConflict(operation)}" \\(fence \\d+\\) was released before it expired, by an operator \\(oncely release, OncelyAdmin\\.forceRelease\\) or by the store losing it: nothing of this run was kept, and the next request with this key runs again\\.$`,
        ),
      );

      const replayed = await post(path, key, ref);
      expect(replayed.status).toBe(201);
      expect(replayed.headers['idempotent-replayed']).toBe('true');
      expect(replayed.body).toEqual({ ref, run: 2 });
      expect(app.get(Executions).of(ref)).toBe(2);
      expect(await backends.effectRows(ref)).toBe(effectRows);
    },
  );

  it('without the coordinator (coordinator: "none"), a retry while the old handler runs is refused with 409 at once, not held until it ends', async () => {
    const recordsOnly = new OncelyAdmin(node.options.store!, {
      admin: new TypeOrmIdempotencyRecordAdmin(node.source),
      coordinator: 'none',
    });
    const key = randomUUID();
    const ref = randomUUID();
    const stuck = post('/payments', key, ref).then((response) => response);
    await app.get(Gates).entered$(ref);
    expect((await post('/payments', key, ref)).status).toBe(409);

    const released = await recordsOnly.forceRelease(identityOfConflict('pay'));
    expect(released).toMatchObject({ kind: 'released', leases: [] });
    const startedAt = performance.now();
    const retried = await post('/payments', key, ref);
    const elapsed = performance.now() - startedAt;

    // The guard's lease, which only the coordinator frees, still holds: the retry is a duplicate
    // in flight, answered as one at once (the route's wait is 10 s, the old handler never ends).
    expect(retried.status).toBe(409);
    expect(retried.body.type).toBe(ProblemType.requestInFlight);
    expect(Number(retried.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(elapsed).toBeLessThan(1_000);
    expect(app.get(Executions).of(ref)).toBe(1);

    app.get(Gates).open(ref);
    expect((await stuck).status).toBe(503);
    const afterwards = await post('/payments', key, ref);
    expect([afterwards.status, afterwards.body]).toEqual([201, { ref, run: 2 }]);
  }, 20_000);

  it('purge of a completed key: the record and the cached replay of its guard go, so the retry runs again', async () => {
    const key = randomUUID();
    const ref = randomUUID();
    app.get(Gates).open(ref);
    expect((await post('/payments', key, ref)).body).toEqual({ ref, run: 1 });
    const replayed = await post('/payments', key, ref);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    const identity = backends.events.findLast(
      (event) => event.outcome === 'replayed' && event.operation?.includes(':pay:'),
    )?.key;
    expect(identity).toBeDefined();

    expect(await admin.purge(identity!)).toEqual({ records: 1, flights: 1 });

    const retried = await post('/payments', key, ref);
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(retried.body).toEqual({ ref, run: 2 });
    expect(app.get(Executions).of(ref)).toBe(2);
  });
});
