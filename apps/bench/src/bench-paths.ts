import { fileURLToPath } from 'node:url';

/** apps/bench, found from the compiled `dist/` (or `src/`) folder of this file. */
export const benchRoot = fileURLToPath(new URL('../', import.meta.url));
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const resultsDir = fileURLToPath(new URL('../results/', import.meta.url));
export const peerDir = fileURLToPath(new URL('../peers/node-idempotency/', import.meta.url));
export const expressPeerDir = fileURLToPath(
  new URL('../peers/express-idempotency/', import.meta.url),
);
export const serversDir = fileURLToPath(new URL('./servers/', import.meta.url));
