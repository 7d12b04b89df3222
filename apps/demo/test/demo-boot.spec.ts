import { jest } from '@jest/globals';
import { EmbeddedBackend } from './support/demo-backend.js';
import { get } from './support/demo-client.js';

jest.setTimeout(60_000);

describe('booting the embedded default', () => {
  const previous = process.env.NODE_ENV;

  afterEach(() => {
    if (previous === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = previous;
  });

  it.each(['development', 'production'])(
    'starts with NODE_ENV=%s and answers /health (the one-process default opts into in-memory coordination)',
    async (nodeEnv) => {
      process.env.NODE_ENV = nodeEnv;
      const backend = new EmbeddedBackend();
      try {
        await backend.start();
        const health = await get(backend.urls[0]!, '/health');
        expect(health.status).toBe(200);
        expect(health.body).toEqual({ status: 'ok', database: 'sqlite', coordinator: 'in-memory' });
      } finally {
        await backend.stop();
      }
    },
  );
});
