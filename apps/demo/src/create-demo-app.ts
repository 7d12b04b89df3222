import 'reflect-metadata';
import { ValidationPipe, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { fileURLToPath } from 'node:url';
import { prepareDatabase, type DemoConfig } from './config/demo-config.js';
import { DEMO_VALIDATION, DemoModule } from './demo.module.js';

/** The static page (`/`): plain HTML and script, served as is, no build step. */
export const PUBLIC_DIR = fileURLToPath(new URL('../public/', import.meta.url));

/**
 * Creates the demo app, ready to `listen` (or to be driven in-process by supertest): the page at
 * `/`, OpenAPI at `/docs`, migrations run.
 */
export async function createDemoApp(
  config: DemoConfig,
  logger: LogLevel[] | false = ['log', 'warn', 'error'],
): Promise<NestExpressApplication> {
  prepareDatabase(config.database);
  const app = await NestFactory.create<NestExpressApplication>(DemoModule.register(config), {
    logger,
  });
  app.enableShutdownHooks();
  app.useGlobalPipes(
    new ValidationPipe({
      ...DEMO_VALIDATION.validator,
      transform: true,
      transformOptions: DEMO_VALIDATION.transformer,
    }),
  );
  app.useStaticAssets(PUBLIC_DIR, { index: 'index.html' });
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('oncely demo')
      .setDescription(
        'Orders, payments, report export and document summaries protected by oncely. Every error is `application/problem+json` (RFC 9457); replays carry `Idempotent-Replayed: true`. See docs/http.md.',
      )
      .setVersion('0.1.0')
      .build(),
  );
  SwaggerModule.setup('docs', app, document);
  return app;
}
