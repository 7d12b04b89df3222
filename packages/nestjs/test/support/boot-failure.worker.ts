// A Nest app whose boot fails, in its own process, started the way a real app's main.ts starts
// it: argv[2] names the app file next to this one, the rest is the app's. Nest's DI needs
// decorator metadata, which tsx does not emit: register the SWC hooks first, then load the app
// through them.
import { register } from 'node:module';

register('./swc-hooks.mjs', import.meta.url);
await import(new URL(`./${process.argv[2]}`, import.meta.url).href);
