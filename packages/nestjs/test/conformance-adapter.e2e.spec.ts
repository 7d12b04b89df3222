import { ConformanceClient, ConformanceProbe, type ConformanceApp } from '@oncely/core/testing';
import { randomUUID } from 'node:crypto';
import { nestHarness, type NestPlatform } from './conformance/nest-harness.js';

/** What only Nest expresses, on the conformance fixture app. */
describe.each<NestPlatform>(['express', 'fastify'])(
  'Nest-only HTTP behaviour on %s',
  (platform) => {
    const probe = new ConformanceProbe();
    let app: ConformanceApp;
    let http: ConformanceClient;

    beforeAll(async () => {
      app = await nestHarness(platform).start({
        probe,
        namespace: `adapter-${randomUUID().slice(0, 8)}`,
        catchAll: 'APP_FILTER',
        serializer: 'APP_INTERCEPTOR in the root module',
        timeoutLayer: false,
      });
      http = new ConformanceClient(app);
    });

    afterAll(async () => {
      probe.openAll();
      await app.close();
    });

    it('hands the handler the validated @Body() DTO with its nested instances', async () => {
      const response = await http.post('/orders', {
        key: randomUUID(),
        tenant: 't-1',
        body: { customer: 'c-1', lines: [{ sku: 'sku-1', quantity: 2 }] },
      });
      expect(response.status).toBe(201);
      expect(response.body?.dtoInstance).toBe(true);
    });
  },
);
