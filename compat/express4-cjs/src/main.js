'use strict';
const { createApp } = require('./app');

async function main() {
  const { app, oncely } = createApp();
  await oncely.start();
  const server = app.listen(Number(process.env.PORT ?? 3000));
  process.once('SIGTERM', () => server.close(() => oncely.close()));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
