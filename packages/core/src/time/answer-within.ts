/** What `answerWithin` saw: the promise's value, or that it had not settled in time. */
export type Answer<T> =
  { readonly answered: true; readonly value: T } | { readonly answered: false };

/**
 * Waits for `pending` at most `timeoutMs`: its value, its rejection (rethrown), or
 * `{ answered: false }` when it had not settled by then. `pending` is left running; a rejection
 * it meets later is swallowed here, so the caller who gave up on it need not handle it.
 */
export function answerWithin<T>(pending: Promise<T>, timeoutMs: number): Promise<Answer<T>> {
  pending.catch(() => undefined);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve({ answered: false }), timeoutMs);
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve({ answered: true, value });
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
