/**
 * Whether a failed insert hit a unique constraint, on every database the demo runs on:
 * PostgreSQL `23505`, MySQL/MariaDB `ER_DUP_ENTRY` (1062), SQLite `SQLITE_CONSTRAINT_UNIQUE`.
 */
export function isUniqueViolation(error: unknown): boolean {
  const driverError = (error as { driverError?: unknown } | null)?.driverError ?? error;
  if (typeof driverError !== 'object' || driverError === null) return false;
  const { code, errno } = driverError as { code?: unknown; errno?: unknown };
  return (
    code === '23505' ||
    code === 'ER_DUP_ENTRY' ||
    errno === 1062 ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}
