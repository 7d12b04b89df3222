export * from './oncely-event.js';
