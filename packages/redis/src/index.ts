export * from './flight/index.js';
export * from './record/index.js';
export * from './security/index.js';
