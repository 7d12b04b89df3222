/** Express 4 under the `express4` npm alias: its API is the one the Express 5 types describe. */
declare module 'express4' {
  import express from 'express';
  export default express;
}
