export * from './failed-boot.js';
export * from './free-port.js';
export * from './redis-cli.js';
export * from './redis-cluster.js';
export * from './redis-server.js';
export * from './services.js';
export * from './spawn-workers.js';
