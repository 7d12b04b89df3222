import { writeStatementKind } from '../src/write-statement-kind.js';

describe('writeStatementKind', () => {
  it.each([
    ['SELECT * FROM "orders" WHERE id = $1'],
    ['  (SELECT 1) UNION (SELECT 2)'],
    ['select id from orders for update'],
    ['SELECT id FROM orders FOR NO KEY UPDATE SKIP LOCKED'],
    ['WITH recent AS (SELECT * FROM orders) SELECT * FROM recent'],
    ["SELECT REPLACE(name, 'a', 'b'), INSERT(name, 1, 1, 'x') FROM t"],
    ["SELECT 'INSERT INTO t VALUES (1); DELETE FROM t' AS text"],
    ['SELECT "delete" FROM t -- DELETE FROM t'],
    ['SELECT 1 /* ; DROP TABLE t */'],
    ['SELECT $body$ ; UPDATE t SET a = 1 $body$'],
    ['SHOW server_version'],
    ['EXPLAIN SELECT 1'],
    ['PRAGMA table_info("orders")'],
    ['START TRANSACTION'],
    ['BEGIN TRANSACTION'],
    ['SET TRANSACTION ISOLATION LEVEL SERIALIZABLE'],
    ['SAVEPOINT typeorm_1'],
    ['ROLLBACK TO SAVEPOINT typeorm_1'],
    ['RELEASE SAVEPOINT typeorm_1'],
    ['COMMIT'],
    ['ROLLBACK'],
    [''],
    ['SELECT 1;'],
  ])('reads: %s', (sql) => {
    expect(writeStatementKind(sql)).toBeUndefined();
  });

  it.each([
    ['INSERT INTO orders (id) VALUES ($1)', 'INSERT'],
    ['  update `orders` SET a = ?', 'UPDATE'],
    ['DELETE FROM "orders"', 'DELETE'],
    ['MERGE INTO orders USING x ON true WHEN MATCHED THEN DELETE', 'MERGE'],
    ['REPLACE INTO orders VALUES (1)', 'REPLACE'],
    ['UPSERT INTO orders VALUES (1)', 'UPSERT'],
    ['CREATE TABLE t (id int)', 'CREATE'],
    ['ALTER TABLE t ADD c int', 'ALTER'],
    ['DROP TABLE t', 'DROP'],
    ['TRUNCATE t', 'TRUNCATE'],
    ['CALL settle_orders()', 'CALL'],
    ['LOCK TABLE orders IN EXCLUSIVE MODE', 'LOCK'],
    ['/* note */ -- line\n INSERT INTO t VALUES (1)', 'INSERT'],
    ['(INSERT INTO t VALUES (1))', 'INSERT'],
    ['SELECT 1; DELETE FROM t', 'DELETE'],
    ['WITH gone AS (DELETE FROM t RETURNING id) SELECT * FROM gone', 'DELETE'],
    ['WITH x AS (SELECT 1) UPDATE t SET a = 1', 'UPDATE'],
    ['WITH x AS (SELECT 1 AS id) INSERT INTO t SELECT id FROM x', 'INSERT'],
    ['SELECT * INTO archive FROM orders', 'SELECT INTO'],
    ['EXPLAIN ANALYZE DELETE FROM t', 'EXPLAIN ANALYZE'],
    ["SELECT 'it''s' ; DELETE FROM t", 'DELETE'],
  ])('writes: %s', (sql, kind) => {
    expect(writeStatementKind(sql)).toBe(kind);
  });
});
