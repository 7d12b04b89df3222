export * from './conformance-client.js';
export * from './conformance-harness.js';
export * from './conformance-probe.js';
export * from './http-conformance.suite.js';
export { isValidPayBody } from './hostile-inputs.js';
export * from './storage-tap.js';
