import { Client } from 'pg';

const SERVER = 'postgres://postgres@127.0.0.1:5432';
const DATABASE = 'oncely_compat_nest11';

/** This suite's own database, so it never meets another suite's records. */
export const DATABASE_URL = `${SERVER}/${DATABASE}`;

/** Drops and creates the database: each run starts empty and runs the migrations itself. */
export async function recreateDatabase(): Promise<void> {
  const client = new Client({ connectionString: `${SERVER}/postgres` });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
}
