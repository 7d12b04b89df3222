import { importPeer } from '../src/operator/import-peer.js';
import { MissingPeerError } from '../src/operator/missing-peer.error.js';
import { dataSourceOptionsOf } from '../src/operator/operator-connection.js';
import { operatorTargetOf } from '../src/operator/operator-target.js';

describe('operator connections and targets', () => {
  it('reads --database URLs: PostgreSQL with its schema, MySQL/MariaDB, SQLite paths', () => {
    expect(dataSourceOptionsOf('postgres://ops:pw@db:5432/app?schema=billing', '/srv')).toEqual({
      type: 'postgres',
      url: 'postgres://ops:pw@db:5432/app',
      poolSize: 2,
      schema: 'billing',
    });
    expect(dataSourceOptionsOf('mariadb://root@db/app', '/srv')).toEqual({
      type: 'mariadb',
      url: 'mysql://root@db/app',
      poolSize: 2,
    });
    expect(dataSourceOptionsOf('mysql://root@db/app', '/srv')).toMatchObject({ type: 'mysql' });
    expect(dataSourceOptionsOf('data/app.sqlite', '/srv')).toEqual({
      type: 'better-sqlite3',
      database: '/srv/data/app.sqlite',
    });
    expect(dataSourceOptionsOf('sqlite:///var/app.db', '/srv')).toMatchObject({
      database: '/var/app.db',
    });
  });

  it('names the package to install when an optional peer is missing', async () => {
    const absent: string = '@oncely/not-installed';
    const missing = importPeer(absent, '--redis', () => import(absent));
    await expect(missing).rejects.toThrow(MissingPeerError);
    await expect(missing).rejects.toThrow(
      '--redis needs the package "@oncely/not-installed", which is not installed. Install it next to @oncely/cli: npm install ioredis @oncely/redis',
    );
    const broken = importPeer('ioredis', '--redis', () => Promise.reject(new Error('boom')));
    await expect(broken).rejects.toThrow('boom');
  });

  it('tells keys, identities and operations apart by their segments', () => {
    expect(operatorTargetOf('shop:pay')).toEqual({ kind: 'operation', operation: 'shop:pay' });
    expect(operatorTargetOf('shop:pay:v1')).toEqual({
      kind: 'operation',
      operation: 'shop:pay:v1',
    });
    expect(operatorTargetOf('shop:pay:v1:t:o')).toEqual({
      kind: 'identity',
      identity: 'shop:pay:v1:t:o',
    });
    expect(operatorTargetOf('shop:pay:v1:t:o:ff')).toEqual({
      kind: 'key',
      key: 'shop:pay:v1:t:o:ff',
      identity: 'shop:pay:v1:t:o',
    });
    for (const bad of ['shop', 'shop:pay:v1:t', 'shop::v1', 'a:b:c:d:e:f:g']) {
      expect(operatorTargetOf(bad)).toBeUndefined();
    }
  });
});
