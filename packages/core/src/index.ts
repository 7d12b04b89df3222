export * from './errors/index.js';
export * from './time/index.js';
export * from './key/index.js';
export * from './flight/index.js';
export * from './record/index.js';
export * from './http/index.js';
export * from './events/index.js';
export * from './security/index.js';
