import type { DataSourceOptions } from 'typeorm';

/**
 * Where a DataSource points, for the start-up line: `postgres db.internal:5432/shop`,
 * `better-sqlite3 data/app.sqlite`. Built from the host, port and database (or those of a `url`),
 * so a password never appears.
 */
export function dataSourceAddress(options: DataSourceOptions): string {
  const { type, host, port, database, url } = options as {
    type: string;
    host?: string;
    port?: number;
    database?: unknown;
    url?: string;
  };
  if (url !== undefined) {
    try {
      const parsed = new URL(url);
      return `${type} ${parsed.host}${parsed.pathname}`;
    } catch {
      return type;
    }
  }
  const name = typeof database === 'string' ? database : '';
  if (host === undefined) return name === '' ? type : `${type} ${name}`;
  return `${type} ${host}${port === undefined ? '' : `:${port}`}/${name}`;
}
