import { InMemoryRecordQuota } from '@oncely/core';
import {
  StorageTap,
  type ConformanceApp,
  type ConformanceAppSettings,
  type HttpConformanceHarness,
} from '@oncely/core/testing';
import { createOncely } from '@oncely/express';
import type { Express, RequestHandler } from 'express';
import type { Server } from 'node:http';
import {
  authentication,
  catchAll,
  handler,
  serializer,
  timeoutLayer,
  type AuthedRequest,
} from './app-layers.js';
import { plainExpressBrowserLayers } from './browser-layers.js';
import { inMemoryConformanceBackend, type ConformanceBackend } from './conformance-backends.js';
import { mountConformanceRoutes } from './conformance.routes.js';
import { mountReadMethodRoutes } from './read-method.routes.js';
import { mountUploadRoutes } from './upload.routes.js';

/** What the fixture needs of an Express major: the app factory and its JSON body parser. */
export interface ExpressMajor {
  (): Express;
  json(options: { limit: string }): RequestHandler;
}

async function startExpressApp(
  express: ExpressMajor,
  backend: ConformanceBackend,
  settings: ConformanceAppSettings,
): Promise<ConformanceApp> {
  const tap = new StorageTap();
  const engines = await backend.engines();
  const oncely = createOncely({
    namespace: settings.namespace,
    coordinator: tap.flightCoordinator(engines.coordinator),
    store: tap.recordStore(engines.store),
    resolveUser: (req: AuthedRequest) => req.user ?? req.principal,
    ...(backend.encryption && { encryption: backend.encryption }),
    ...(settings.recordQuota && {
      recordQuota: { quota: new InMemoryRecordQuota(), ...settings.recordQuota },
    }),
  });
  try {
    const app = express();
    if (settings.browserLayers) app.use(plainExpressBrowserLayers());
    app.use(express.json({ limit: '100kb' }));
    app.use(authentication(settings.probe));
    app.use(serializer);
    if (settings.timeoutLayer) app.use(timeoutLayer);
    mountConformanceRoutes(app, oncely, settings.probe);
    mountReadMethodRoutes(app, oncely, settings.probe);
    mountUploadRoutes(app, oncely, settings.probe);
    if (settings.collidingRoutes) {
      const shared = settings.collidingRoutes === 'shared' ? { shared: true } : {};
      for (const route of ['a', 'b']) {
        app.post(
          `/collisions/${route}`,
          oncely.idempotent({
            operation: 'collision',
            scope: 'user.tenantId',
            name: `POST /collisions/${route}`,
            ...shared,
          }),
          handler((_req, res) => {
            res.status(201).json({ route, execution: settings.probe.hit('collision') });
          }),
        );
      }
    }
    app.use(catchAll);
    const server: Server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    return {
      baseUrl: `http://127.0.0.1:${port}`,
      close: async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
        await oncely.close();
        await engines.release();
      },
      records: async () => tap.records(),
      storedText: async () => (await engines.rawStoredText(settings.namespace)) ?? tap.storedText(),
    };
  } catch (error) {
    await oncely.close();
    await engines.release();
    throw error;
  }
}

/** Plain Express (4 or 5) with oncely's middleware, on the given backend. */
export function expressHarness(
  name: string,
  express: ExpressMajor,
  backend: ConformanceBackend = inMemoryConformanceBackend(),
): HttpConformanceHarness {
  return {
    name: `${name} (${backend.name})`,
    capabilities: [
      'raw-response-writes',
      'next-error',
      'storage-inspection',
      'binary-body',
      'multipart-uploads',
      ...(backend.encryption ? (['encrypted-storage'] as const) : []),
    ],
    catchAllRegistrations: ['error-handling middleware'],
    serializerRegistrations: ['response-shaping middleware'],
    timeoutStatus: 503,
    collisionRouteNames: ['POST /collisions/a', 'POST /collisions/b'],
    start: (settings) => startExpressApp(express, backend, settings),
  };
}
