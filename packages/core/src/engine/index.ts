export * from './protection-engines.js';
export * from './protection-setup.js';
export * from './secure-engines.js';
