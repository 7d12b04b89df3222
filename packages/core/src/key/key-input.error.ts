import { OncelyError } from '../errors/oncely-error.js';
import { MAX_CANONICAL_INPUT_LENGTH, MAX_INPUT_DEPTH } from './key.constants.js';

/** Which canonicalisation rule a key input broke; sent to clients as the problem's `reason`. */
export type KeyInputErrorReason =
  | 'non_finite_number'
  | 'cycle'
  | 'unsupported_type'
  | 'too_deep'
  | 'too_large'
  | 'malformed_unicode'
  | 'duplicate_key'
  | 'invalid_normalizer_result'
  | 'invalid_segment_value'
  | 'boolean_scope_value';

/**
 * A value that should enter a key has no canonical form: NaN or Infinity, a cycle, a type
 * without a defined encoding, malformed Unicode, or it is too deep or too large. Maps to a 400.
 */
export class KeyInputError extends OncelyError {
  readonly code = 'key_input_invalid';

  /**
   * @param reason which rule the value broke.
   * @param path where the value sits, from the root of the value being canonicalised
   *   (`body.items.2.price` in `buildKey`), `(root)` for the root itself.
   * @param found a short description of the offending value's type, never its content.
   */
  constructor(
    readonly reason: KeyInputErrorReason,
    readonly path: string,
    readonly found = '',
  ) {
    super(`Key input at ${path} ${explain(reason, found)}`);
  }
}

function explain(reason: KeyInputErrorReason, found: string): string {
  switch (reason) {
    case 'non_finite_number':
      return `is ${found}, which has no canonical form. Reject it during validation or send the number as a string.`;
    case 'cycle':
      return 'refers back to one of its own ancestors. Pass an acyclic value, or mark the back-reference with @KeyIgnore().';
    case 'unsupported_type':
      return `is ${found}, which has no canonical form. Convert it to a string, number, plain object or array (for example with @Transform), or mark the property with @KeyIgnore().`;
    case 'too_deep':
      return `nests deeper than ${MAX_INPUT_DEPTH} levels. Narrow spec.input to the fields that decide the result.`;
    case 'too_large':
      return `makes the canonical input longer than ${MAX_CANONICAL_INPUT_LENGTH} characters. Narrow spec.input, or hash bulky content (files, documents) yourself and key on the hash.`;
    case 'malformed_unicode':
      return 'contains a lone UTF-16 surrogate, which is not well-formed Unicode. Reject such text during validation.';
    case 'duplicate_key':
      return `has two ${found} that are equal once canonicalised (for example NFC and NFD spellings of one text). Keep only one of them.`;
    case 'invalid_normalizer_result':
      return `was given to a custom normaliser that returned ${found} instead of a string. Make the normaliser return a string.`;
    case 'invalid_segment_value':
      return `is ${found}; scope and target values must be strings, finite numbers, bigints, booleans (target only) or Dates. Point the path at a scalar, or use a function source that derives one.`;
    case 'boolean_scope_value':
      return 'is a boolean, which is not an identity: scope values are tenant, user or account ids. Point the path at the id itself (a failed lookup returning false must not become a tenant).';
  }
}
