import { jest } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { CoreCallSpy } from '../support/core-call-spy.js';

/**
 * The boundary between `@oncely/nestjs` and `@oncely/core` on the request path: every call the
 * framework package makes into core for one request, counted by a spy standing in for core's two
 * entries. Whatever a request needs of core beyond these few calls happens inside core.
 */
const spy = new CoreCallSpy();
const coreEntry = await import('@oncely/core');
const adapterEntry = await import('@oncely/core/adapter');
jest.unstable_mockModule('@oncely/core', () => spy.wrapEntry(coreEntry));
jest.unstable_mockModule('@oncely/core/adapter', () => spy.wrapEntry(adapterEntry));

const { Test } = await import('@nestjs/testing');
const { OncelyModule } = await import('@oncely/nestjs');
const { Executions, PLATFORMS, startOn, uniqueNamespace } = await import('../fixtures/test-app.js');
const { CoreCallsController } = await import('./core-calls.app.js');

/** The keys, then the executor's decision. */
const DECIDE = ['httpCallKeys', 'ProtectedCallExecutor.execute'];
/** The handler ran here: its response is held until the record keeps it, then sent. */
const OWN = [...DECIDE, 'ResponseCapture.holdingFor', 'ResponseCapture.commit'];
/** A kept answer goes out at the platform's next send, the value through the outer layers. */
const KEPT = [...DECIDE, 'answerAtNextSend', 'replayedBodyValue'];

describe.each(PLATFORMS)('calls into core per request on Nest-%s', (platform) => {
  let app: INestApplication;
  let executions: InstanceType<typeof Executions>;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [OncelyModule.forRoot({ namespace: uniqueNamespace('calls') })],
      controllers: [CoreCallsController],
      providers: [Executions],
    }).compile();
    app = await startOn(platform, moduleRef);
    executions = app.get(Executions);
  });

  afterAll(() => app.close());

  async function counted(send: () => Promise<request.Response>, status: number) {
    spy.start();
    const response = await send();
    const calls = spy.stop();
    expect(response.status).toBe(status);
    return { calls, response };
  }

  const pay = () =>
    request(app.getHttpServer())
      .post('/payments')
      .set('x-tenant', 't-1')
      .set('idempotency-key', `k-${platform}`)
      .send({ amount: '10.00' });

  it('an idempotent miss, then its replay', async () => {
    const miss = await counted(pay, 201);
    const replay = await counted(pay, 201);
    expect(replay.response.headers['idempotent-replayed']).toBe('true');
    expect(executions.of('payment')).toBe(1);
    expect({ miss: miss.calls, replay: replay.calls }).toEqual({ miss: OWN, replay: KEPT });
  });

  it('a SingleFlight miss, then a hit on its cached result', async () => {
    const quote = () =>
      request(app.getHttpServer()).get('/quotes').query({ sku: 'sku-1' }).set('x-tenant', 't-1');
    const miss = await counted(quote, 200);
    const hit = await counted(quote, 200);
    expect(hit.response.body).toEqual(miss.response.body);
    expect(executions.of('quote')).toBe(1);
    expect({ miss: miss.calls, hit: hit.calls }).toEqual({ miss: OWN, hit: KEPT });
  });
});
