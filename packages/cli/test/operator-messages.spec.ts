import { fileURLToPath } from 'node:url';
import { oncelyWith } from './fixtures/cli-session.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const run = (...args: string[]) => oncelyWith({ cwd: root }, ...args);

describe('operator command messages', () => {
  it('names the targets a command takes, each with its article, when given another kind', async () => {
    const keys = await run('keys', 'shop:pay:v1:t-1:order-1', '--redis', 'redis://127.0.0.1:1');
    expect(keys.code).toBe(2);
    expect(keys.err).toMatch(
      /^"shop:pay:v1:t-1:order-1" is not an operation \(ns:op:ver, or ns:op for every version\)\.\n/,
    );
    const none = await run('keys', '--redis', 'redis://127.0.0.1:1');
    expect(none.err).toMatch(/^Name an operation \(ns:op:ver, or ns:op for every version\)\.\n/);

    const release = await run('release', 'shop:pay:v1', '--redis', 'redis://127.0.0.1:1');
    expect(release.err).toMatch(
      /^"shop:pay:v1" is not a business key \(ns:op:ver:scope:target:fingerprint\) or an identity \(ns:op:ver:scope:target\)\.\n/,
    );
  });

  it('a database it cannot reach names --database, where, and what was wrong, never the password', async () => {
    const refused = await run(
      'keys',
      'shop:pay:v1',
      '--database',
      'postgres://ops:s3cret@127.0.0.1:1/app',
    );
    expect(refused.code).toBe(2);
    expect(refused.err).toBe(
      'Could not connect to the database at postgres://ops@127.0.0.1:1/app: connect ECONNREFUSED 127.0.0.1:1. Check --database and that the server is reachable.\n',
    );

    const malformed = await run('keys', 'shop:pay:v1', '--database', 'postgres://ops:s3cret@[db');
    expect(malformed.code).toBe(2);
    expect(malformed.err).toMatch(
      /^--database postgres:\/\/ops@\[db is not a valid URL: give postgres:\/\/user@host:port\/database/,
    );
    expect(malformed.err).not.toContain('s3cret');
  });
});
