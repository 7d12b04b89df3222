export { OncelyError } from './oncely-error.js';
