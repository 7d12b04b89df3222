/** An adapter (or the part of one) the engine closes. */
export interface Closable {
  close(): Promise<void>;
}

/**
 * Runs `check` (an entry point checking its options, building the engine); when it throws,
 * closes the coordinator and store the options hand over, then rethrows. Handed over, they are
 * oncely's to close, and one built from a URL has already opened its connections: left open, a
 * refused configuration would keep the process alive behind its error. The closing is not
 * awaited (the entry points are synchronous); its failures are dropped, the refusal being the
 * error worth reporting.
 */
export function closeGivenAdaptersOnError<T>(options: unknown, check: () => T): T {
  try {
    return check();
  } catch (error) {
    const { coordinator, store } = (options ?? {}) as { coordinator?: unknown; store?: unknown };
    for (const adapter of [coordinator, store]) {
      if (isClosable(adapter))
        void Promise.resolve()
          .then(() => adapter.close())
          .catch(() => undefined);
    }
    throw error;
  }
}

/** Whether `value` has a `close()`: adapters need not have one. */
export function isClosable(value: unknown): value is Closable {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<Closable>).close === 'function'
  );
}
