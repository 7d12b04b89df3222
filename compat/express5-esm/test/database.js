import pg from 'pg';

const server = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432';

/**
 * This app's own database on the shared PostgreSQL, created on first use: its tables never meet
 * another suite's. Fails when PostgreSQL is down.
 */
export async function ensureDatabase(name) {
  const client = new pg.Client({ connectionString: `${server}/postgres` });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  return `${server}/${name}`;
}
