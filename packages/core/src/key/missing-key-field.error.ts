import { OncelyError } from '../errors/oncely-error.js';

/**
 * A required scope or target value is absent, `null` or an empty string. No key is built: an
 * identity with a silent placeholder (`no-user`) would merge unrelated requests. Maps to a 400.
 */
export class MissingKeyFieldError extends OncelyError {
  readonly code = 'key_field_missing';

  /**
   * @param field the path into the request context (`user.tenantId`), or `scope[i]` plus the
   *   function's name for a function source.
   * @param segment the key segment the value was meant for.
   * @param operation `namespace:operation:version` of the key being built.
   */
  constructor(
    readonly field: string,
    readonly segment: 'scope' | 'target',
    readonly operation: string,
  ) {
    super(
      `The key field ${field} (${segment} of ${operation}) is missing, null or empty. Send it with the request; if a fixed fallback is genuinely safe, declare the path as { path, optional: true, default } in the key spec.`,
    );
  }
}
