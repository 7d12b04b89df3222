/**
 * Base of every error oncely raises on purpose. `code` is stable and machine-readable; the HTTP
 * mapping (problem+json `type`, status) is derived from it in one place (`http/problem-details`).
 */
export abstract class OncelyError extends Error {
  abstract readonly code: string;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}
