import { OncelyError } from '../errors/oncely-error.js';

/**
 * What is missing, which decides who can supply it: a field of the request (the client sends
 * it), a field of the authenticated principal or the principal itself (resolved on the server by
 * an authentication step, never sent by the client), or a value a function source computed.
 */
export type MissingKeyFieldKind = 'request_field' | 'principal_field' | 'principal' | 'computed';

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
   * @param missing what is missing, which the message tells its reader how to supply.
   */
  constructor(
    readonly field: string,
    readonly segment: 'scope' | 'target',
    readonly operation: string,
    readonly missing: MissingKeyFieldKind = 'request_field',
  ) {
    super(`The key field ${field} (${segment} of ${operation}) ${explain(field, missing)}`);
  }
}

const PRINCIPAL_PATH = 'user';

/** Whether a context path reads the authenticated principal (`user`, `user.tenantId`). */
export function isPrincipalPath(path: string): boolean {
  return path === PRINCIPAL_PATH || path.startsWith(`${PRINCIPAL_PATH}.`);
}

// A principal is resolved on the server: telling the client to send it would be untrue.
const RESOLVED_ON_SERVER = 'The principal is resolved on the server, not sent by the client: ';

function explain(field: string, missing: MissingKeyFieldKind): string {
  switch (missing) {
    case 'request_field':
      return 'is missing, null or empty. Send it with the request; if a fixed fallback is genuinely safe, declare the path as { path, optional: true, default } in the key spec.';
    case 'principal': {
      const step = 'an authentication step (a guard, or resolveUser with Express)';
      return `comes from the request's authenticated principal, and the request has none. ${RESOLVED_ON_SERVER}${step} must set it before oncely builds the key.`;
    }
    case 'principal_field': {
      const property = field.slice(PRINCIPAL_PATH.length + 1);
      const step = 'the authentication step that sets it (a guard, or resolveUser with Express)';
      return `comes from the request's authenticated principal, which has no ${property} (or it is null or empty). ${RESOLVED_ON_SERVER}${step} must give it ${property}.`;
    }
    case 'computed':
      return 'is computed on the server from the request and came out missing, null or empty. Make the function return a value for every request the route accepts.';
  }
}
