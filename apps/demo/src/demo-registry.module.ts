import { demoConfigFromEnv } from './config/demo-config.js';
import { DemoModule } from './demo.module.js';

/**
 * The demo's module graph as `oncely registry` reads it (`npm run registry:check`): built with the
 * default configuration, which no environment variable changes. Only the module graph is read:
 * no provider is created, so no database or Redis is opened.
 */
export default DemoModule.register(demoConfigFromEnv({}));
