/** What `answerWithin` saw: the promise's value, or that it had not settled in time. */
export type Answer<T> =
  { readonly answered: true; readonly value: T } | { readonly answered: false };

/**
 * Waits for `pending` at most `timeoutMs`: its value, its rejection (rethrown), or
 * `{ answered: false }` when it had not settled by then. `pending` is left running; a rejection
 * it meets later is handled here (by the race), so the caller who gave up on it need not.
 */
export async function answerWithin<T>(pending: Promise<T>, timeoutMs: number): Promise<Answer<T>> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<Answer<T>>((resolve) => {
    timer = setTimeout(() => resolve({ answered: false }), timeoutMs);
  });
  try {
    return await Promise.race([
      pending.then((value): Answer<T> => ({ answered: true, value })),
      elapsed,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
