// One RabbitMQ consumer (a Nest microservice) in its own process, killable with SIGKILL. Nest's
// DI needs decorator metadata, which tsx does not emit: register the SWC hooks first, then load
// the app through them.
import { register } from 'node:module';

register('./swc-hooks.mjs', import.meta.url);
await import(new URL('./rabbitmq-consumer-node.ts', import.meta.url).href);
