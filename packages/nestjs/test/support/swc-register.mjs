// `node --import <this file> app.ts`: runs TypeScript through `swc-hooks.mjs`.
import { register } from 'node:module';

register('./swc-hooks.mjs', import.meta.url);
