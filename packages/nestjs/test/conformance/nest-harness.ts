import {
  ClassSerializerInterceptor,
  Module,
  ValidationPipe,
  type ExecutionContext,
  type INestApplication,
  type Type,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, HttpAdapterHost } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { InMemoryRecordQuota, type KeyContext } from '@oncely/core';
import {
  ConformanceProbe,
  StorageTap,
  type ConformanceApp,
  type ConformanceAppSettings,
  type HttpConformanceHarness,
} from '@oncely/core/testing';
import { OncelyModule } from '@oncely/nestjs';
// Shared with the Express runner, so both integrations run on the very same backends.
import {
  inMemoryConformanceBackend,
  type ConformanceBackend,
} from '../../../express/test/conformance/conformance-backends.js';
import type { Server } from 'node:http';
import {
  CONFORMANCE_CORS,
  expressBrowserLayers,
} from '../../../express/test/conformance/browser-layers.js';
import { AllExceptionsFilter, ConformanceAuthGuard, TimeoutInterceptor } from './app-layers.js';
import { collisionControllers } from './collision.controllers.js';
import { registerFastifyBrowserLayers } from './fastify-browser-layers.js';
import { IdempotentRoutesController } from './idempotent-routes.controller.js';
import { ReadMethodRoutesController } from './read-method-routes.controller.js';
import { SingleFlightRoutesController } from './single-flight-routes.controller.js';
import { UploadRoutesController } from './upload-routes.controller.js';

export type NestPlatform = 'express' | 'fastify';

const CATCH_ALL = ['useGlobalFilters', 'APP_FILTER'] as const;
const SERIALIZER = [
  'APP_INTERCEPTOR in the root module',
  'APP_INTERCEPTOR in a module imported before OncelyModule',
] as const;
const SERIALIZER_PROVIDER = { provide: APP_INTERCEPTOR, useClass: ClassSerializerInterceptor };

/** A feature module that brings the global serializer along, imported ahead of oncely. */
@Module({ providers: [SERIALIZER_PROVIDER] })
class SerializerModule {}

/** Where keys find the principal: `request.user`, else `request.principal` (the contract). */
function principalFallback(context: ExecutionContext, base: KeyContext): KeyContext {
  if (base.user !== undefined) return base;
  return { ...base, user: context.switchToHttp().getRequest<{ principal?: unknown }>().principal };
}

/**
 * A Nest app built the way the NestJS docs show: global `ClassSerializerInterceptor` as
 * `APP_INTERCEPTOR`, global `ValidationPipe({ whitelist: true })`, the docs' timeout interceptor
 * and catch-all filter, oncely imported like any module, on the given backend seen through a
 * `StorageTap`.
 */
async function startNestApp(
  platform: NestPlatform,
  backend: ConformanceBackend,
  settings: ConformanceAppSettings,
): Promise<ConformanceApp> {
  const tap = new StorageTap();
  const engines = await backend.engines();
  // A boot that fails (a refused option, clashing routes) still frees the backend's engines.
  try {
    const controllers: Type[] = [
      IdempotentRoutesController,
      SingleFlightRoutesController,
      ReadMethodRoutesController,
    ];
    // multer is Express's: Nest's upload interceptors are `@nestjs/platform-express`'s.
    if (platform === 'express') controllers.push(UploadRoutesController);
    if (settings.collidingRoutes) {
      controllers.push(...collisionControllers(settings.collidingRoutes === 'shared'));
    }
    const serializerFirst = settings.serializer === SERIALIZER[1];
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...(serializerFirst ? [SerializerModule] : []),
        OncelyModule.forRoot({
          namespace: settings.namespace,
          coordinator: tap.flightCoordinator(engines.coordinator),
          store: tap.recordStore(engines.store),
          keyContext: principalFallback,
          ...(backend.encryption && { encryption: backend.encryption }),
          ...(settings.recordQuota && {
            recordQuota: { quota: new InMemoryRecordQuota(), ...settings.recordQuota },
          }),
        }),
      ],
      controllers,
      providers: [
        { provide: ConformanceProbe, useValue: settings.probe },
        { provide: APP_GUARD, useClass: ConformanceAuthGuard },
        ...(serializerFirst ? [] : [SERIALIZER_PROVIDER]),
        ...(settings.catchAll === 'APP_FILTER'
          ? [{ provide: APP_FILTER, useClass: AllExceptionsFilter }]
          : []),
      ],
    }).compile();
    const app: INestApplication =
      platform === 'express'
        ? moduleRef.createNestApplication({ logger: false })
        : moduleRef.createNestApplication<NestFastifyApplication>(
            new FastifyAdapter({ bodyLimit: 100 * 1024 }),
            { logger: false },
          );
    app.useGlobalPipes(new ValidationPipe({ whitelist: true }));
    if (settings.catchAll === 'useGlobalFilters') {
      app.useGlobalFilters(new AllExceptionsFilter(app.get(HttpAdapterHost)));
    }
    if (settings.timeoutLayer) app.useGlobalInterceptors(new TimeoutInterceptor());
    if (settings.browserLayers) {
      app.enableCors(CONFORMANCE_CORS);
      if (platform === 'express') app.use(...expressBrowserLayers());
      else await registerFastifyBrowserLayers(app as NestFastifyApplication);
    }
    await app.listen(0, '127.0.0.1');
    const server = app.getHttpServer() as Server;
    const { port } = server.address() as { port: number };
    return {
      baseUrl: `http://127.0.0.1:${port}`,
      close: async () => {
        server.closeAllConnections();
        await app.close();
        await engines.release();
      },
      records: async () => tap.records(),
      storedText: async () => (await engines.rawStoredText(settings.namespace)) ?? tap.storedText(),
    };
  } catch (error) {
    await engines.release();
    throw error;
  }
}

export function nestHarness(
  platform: NestPlatform,
  backend: ConformanceBackend = inMemoryConformanceBackend(),
): HttpConformanceHarness {
  return {
    name: `Nest on ${platform === 'express' ? 'Express' : 'Fastify'} (${backend.name})`,
    capabilities: [
      'storage-inspection',
      'outer-answer-detection',
      ...(platform === 'fastify' ? (['binary-body'] as const) : (['multipart-uploads'] as const)),
      ...(backend.encryption ? (['encrypted-storage'] as const) : []),
    ],
    catchAllRegistrations: CATCH_ALL,
    serializerRegistrations: SERIALIZER,
    timeoutStatus: 408,
    collisionRouteNames: ['CollisionAController.create', 'CollisionBController.create'],
    refusesEmptyJsonBody: platform === 'fastify',
    refusesPrototypePoisoning: platform === 'fastify',
    start: (settings) => startNestApp(platform, backend, settings),
  };
}
