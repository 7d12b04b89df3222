/** What one statement returned: its rows, and how many rows it changed. */
export interface StatementResult {
  readonly records: unknown[];
  readonly affected: number;
}
