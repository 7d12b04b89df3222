import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { configureApp } from './configure-app';

async function bootstrap() {
  const app = await NestFactory.create(AppModule);
  configureApp(app);
  // Lets oncely close what it owns (here: its in-memory stores) on SIGTERM.
  app.enableShutdownHooks();
  await app.listen(3000);
}
bootstrap();
