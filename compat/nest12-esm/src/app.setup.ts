import { ValidationPipe, type INestApplication } from '@nestjs/common';
import { ProblemFilter } from './problem.filter.js';

/**
 * What `main.ts` and the tests both apply. oncely's interceptor validates protected bodies with
 * this global pipe's settings, so a field stripped here never changes a fingerprint.
 */
export function configureApp(app: INestApplication): INestApplication {
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true }));
  app.useGlobalFilters(new ProblemFilter());
  app.enableShutdownHooks();
  return app;
}
