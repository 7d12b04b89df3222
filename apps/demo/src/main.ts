import { Logger } from '@nestjs/common';
import { demoConfigFromEnv } from './config/demo-config.js';
import { createDemoApp } from './create-demo-app.js';

const config = demoConfigFromEnv();
const app = await createDemoApp(config);
await app.listen(config.port);
new Logger('Demo').log(
  `oncely demo on http://localhost:${config.port} (OpenAPI at /docs) — database: ${config.database.kind}, coordinator: ${config.redisUrl ? 'redis' : 'in-memory'}`,
);
