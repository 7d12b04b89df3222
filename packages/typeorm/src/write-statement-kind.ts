/**
 * Statements that change no rows and no schema: reads, transaction control and session settings.
 * Anything else counts as a write, so a kind this list does not know (`CALL`, `LOCK`, `COPY`, a
 * vendor extension) is refused rather than let through.
 */
const readOnlyKinds = new Set([
  'SELECT',
  'WITH',
  'VALUES',
  'TABLE',
  'SHOW',
  'DESCRIBE',
  'DESC',
  'EXPLAIN',
  'PRAGMA',
  'BEGIN',
  'START',
  'COMMIT',
  'END',
  'ROLLBACK',
  'ABORT',
  'SAVEPOINT',
  'RELEASE',
  'SET',
  'RESET',
]);

/** Verbs that make a `WITH` statement (a PostgreSQL data-modifying CTE, or its main part) write. */
const modifyingVerbs = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

type Token = string;

/**
 * The kind of the first statement in `sql` that may write (`INSERT`, `CREATE`, `SELECT INTO`,
 * …), or `undefined` when every statement in it only reads. Literals, quoted identifiers and
 * comments are skipped, so a value or a name never decides; `SELECT ... FOR UPDATE` and other
 * locking reads count as reads (they change no data, and any write that follows is judged on its
 * own). A function called from a `SELECT` is not looked into.
 */
export function writeStatementKind(sql: string): string | undefined {
  for (const statement of statementsOf(sql)) {
    const kind = writeKindOf(statement);
    if (kind !== undefined) return kind;
  }
  return undefined;
}

function writeKindOf(tokens: Token[]): string | undefined {
  const first = tokens.find((token) => token !== '(');
  if (first === undefined) return undefined;
  if (!readOnlyKinds.has(first)) return first;
  if (first === 'EXPLAIN') return tokens.includes('ANALYZE') ? 'EXPLAIN ANALYZE' : undefined;
  if ((first === 'SELECT' || first === 'WITH') && tokens.includes('INTO')) {
    const verb = tokens.find((token) => token === 'INSERT' || token === 'REPLACE');
    return verb ?? 'SELECT INTO';
  }
  if (first !== 'WITH') return undefined;
  // A modifying verb opens a CTE body (`AS (DELETE ...`) or follows the CTE list (`) UPDATE`);
  // anywhere else it is a lock clause (`FOR UPDATE`) or a function call (`INSERT(...)`).
  return tokens.find(
    (token, i) =>
      modifyingVerbs.has(token) &&
      (tokens[i - 1] === '(' || tokens[i - 1] === ')') &&
      tokens[i + 1] !== '(',
  );
}

/** Upper-cased words and parentheses of each statement, without literals and comments. */
function statementsOf(sql: string): Token[][] {
  const statements: Token[][] = [[]];
  let current = statements[0] as Token[];
  let i = 0;
  while (i < sql.length) {
    const char = sql[i] as string;
    const next = sql[i + 1];
    if (char === '-' && next === '-') {
      i = endOf(sql, '\n', i + 2);
    } else if (char === '/' && next === '*') {
      i = endOf(sql, '*/', i + 2);
    } else if (char === "'" || char === '"' || char === '`') {
      i = endOfQuoted(sql, char, i + 1);
    } else if (char === '$' && next !== undefined && !/[0-9]/.test(next)) {
      const tag = /^\$[A-Za-z0-9_]*\$/.exec(sql.slice(i));
      i = tag ? endOf(sql, tag[0], i + tag[0].length) : i + 1;
    } else if (char === '(' || char === ')') {
      current.push(char);
      i += 1;
    } else if (char === ';') {
      current = [];
      statements.push(current);
      i += 1;
    } else if (/[A-Za-z_]/.test(char)) {
      const word = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(sql.slice(i, i + 64))?.[0] ?? char;
      current.push(word.toUpperCase());
      i += word.length;
    } else {
      i += 1;
    }
  }
  return statements;
}

/** Index just past the next `terminator` from `from`, or the end of `sql`. */
function endOf(sql: string, terminator: string, from: number): number {
  const at = sql.indexOf(terminator, from);
  return at === -1 ? sql.length : at + terminator.length;
}

/** Index just past the closing `quote`: a doubled quote or a backslash escapes it. */
function endOfQuoted(sql: string, quote: string, from: number): number {
  let i = from;
  while (i < sql.length) {
    const char = sql[i];
    if (char === '\\') {
      i += 2;
    } else if (char === quote) {
      if (sql[i + 1] !== quote) return i + 1;
      i += 2;
    } else {
      i += 1;
    }
  }
  return sql.length;
}
