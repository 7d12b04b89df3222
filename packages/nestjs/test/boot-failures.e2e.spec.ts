import { createOncelyEngine, type OncelyEngine } from '@oncely/core';
import { RedisIdempotencyRecordStore } from '@oncely/redis';
import {
  exitAfterFailedBoot,
  killAllWorkers,
  requireService,
  services,
  spawnWorker,
} from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('./support/boot-failure.worker.ts', import.meta.url));

/** Boots the app with `failure`; what it printed, and how it exited. */
async function failedBoot(failure: 'record-table' | 'foreign-claim') {
  const worker = spawnWorker(WORKER, {
    args: ['boot-failure.app.ts', failure],
    env: { NO_COLOR: '1' },
  });
  const { code } = await worker.exited;
  const output = worker.output();
  return { code, output, handled: output.match(/ERROR \[ExceptionHandler\] .*/g) ?? [] };
}

afterAll(killAllWorkers);

describe('a Nest app whose boot oncely refuses', () => {
  it('a record table not migrated: logged once by Nest’s exception handler, the process exits 1', async () => {
    const { code, output, handled } = await failedBoot('record-table');

    expect(handled).toEqual([
      expect.stringMatching(
        /^ERROR \[ExceptionHandler\] RecordTableNotMigratedError: The idempotency record table oncely_idempotency_record does not exist/,
      ),
    ]);
    expect(output).not.toMatch(/listening/);
    expect(code).toBe(1);
  }, 60_000);

  // Found at bootstrap, where Nest's handler does not look: the module logs it the same way, and
  // the rejected listen() stops the boot (a main.ts that does not catch it also gets Node's print).
  it('another service’s claim: logged once the same way, after the start-up lines, and the process exits 1', async () => {
    const { code, output, handled } = await failedBoot('foreign-claim');

    // The start-up lines go through Nest's Logger by default.
    expect(output).toMatch(
      /LOG \[OncelyModule\] oncely: flight coordinator in-memory \(this process only\)\n/,
    );
    expect(output).toMatch(
      /LOG \[OncelyModule\] oncely: record store in-memory \(this process only\)\n/,
    );

    expect(handled).toEqual([
      expect.stringMatching(
        /^ERROR \[ExceptionHandler\] ForeignClaimError: Service "billing-api" \(PaymentsController\.capture \(POST \/payments\)\) claims idempotency operation "shop:payment-capture:v1", which service "orders-api" \(OrdersController\.capture\) already claims/,
      ),
    ]);
    expect(output).not.toMatch(/listening/);
    expect(code).toBe(1);
  }, 60_000);
});

describe('a failed boot on adapters oncely built from a URL, under a main.ts that does not call process.exit', () => {
  const keyPrefix = `oncely-failboot-${randomUUID().slice(0, 8)}:`;
  let redis: Redis;
  let orders: OncelyEngine;

  beforeAll(async () => {
    await requireService('redis');
    redis = new Redis({ ...services.redis });
    // Another service, holding the operation the app claims, where the app's records go.
    orders = createOncelyEngine({
      namespace: 'shop',
      service: 'orders-api',
      store: new RedisIdempotencyRecordStore(redis, { keyPrefix }),
      logger: false,
    });
    orders.defineRoute('OrdersController.capture', {
      idempotent: { operation: 'payment-capture', scope: 'user.tenantId' },
    });
    await orders.registerClaims();
  });

  afterAll(async () => {
    await orders?.close();
    await redis?.quit();
  });

  const failures = [
    ['record-table', 'RecordTableNotMigratedError'],
    ['foreign-claim', 'ForeignClaimError'],
    ['route-option', 'TransactionalStoreRequiredError'],
    ['module-option', 'OncelyConfigurationError'],
  ] as const;
  const boots = [
    ['listen', 'NestFactory.create + listen'],
    ['testing', 'Test.createTestingModule().compile() + init'],
  ] as const;

  describe.each(['forRoot', 'forRootAsync'] as const)('OncelyModule.%s', (moduleStyle) => {
    describe.each(boots)('%s (%s)', (boot) => {
      it.each(failures)(
        '%s: the process exits 1 by itself (%s)',
        async (failure, errorName) => {
          const worker = spawnWorker(WORKER, {
            args: ['exiting-boot.app.ts', failure, boot, moduleStyle, keyPrefix],
          });
          expect(await exitAfterFailedBoot(worker)).toEqual({
            failed: errorName,
            code: 1,
            signal: null,
          });
        },
        60_000,
      );
    });
  });
});
