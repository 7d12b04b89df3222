// One release of the payments service of the deploy simulation, in its own process. Nest's DI
// needs decorator metadata, which tsx does not emit: register the SWC hooks first, then load the
// app through them.
import { register } from 'node:module';

register('./swc-hooks.mjs', import.meta.url);
await import(new URL('./deploy-node.ts', import.meta.url).href);
