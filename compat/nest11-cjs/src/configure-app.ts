import { ClassSerializerInterceptor, INestApplication, ValidationPipe } from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { TimeoutInterceptor } from './common/timeout.interceptor';

/**
 * The global pipe, interceptors and filter, as the NestJS docs register them in `main.ts`. The
 * e2e tests call this too, so they run the app as it runs in production. oncely validates a
 * protected route's body with this same `ValidationPipe`'s settings before it builds a key.
 */
export function configureApp(app: INestApplication): INestApplication {
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, transform: true }));
  app.useGlobalInterceptors(
    new ClassSerializerInterceptor(app.get(Reflector)),
    new TimeoutInterceptor(),
  );
  app.useGlobalFilters(new AllExceptionsFilter(app.get(HttpAdapterHost)));
  return app;
}
