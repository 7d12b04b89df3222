import { killAllWorkers, spawnWorker } from '@oncely/testing-kit';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('./support/boot-failure.worker.ts', import.meta.url));

/** Boots the app with `failure`; what it printed, and how it exited. */
async function failedBoot(failure: 'record-table' | 'foreign-claim') {
  const worker = spawnWorker(WORKER, { args: [failure], env: { NO_COLOR: '1' } });
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
