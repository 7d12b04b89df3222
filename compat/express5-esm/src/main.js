import { createApp } from './app.js';
import { createDataSource } from './data-source.js';

const dataSource = await createDataSource(
  process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/shop',
).initialize();
const { app, oncely } = createApp({ dataSource });
// Checks the record table before the first request: a missing migration fails the boot here.
await oncely.start();
const server = app.listen(Number(process.env.PORT ?? 3000));

process.once('SIGTERM', () =>
  server.close(async () => {
    await oncely.close();
    await dataSource.destroy();
  }),
);
