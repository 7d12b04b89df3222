/** What an operator names on the command line, told apart by its number of segments. */
export type OperatorTarget =
  | {
      /** `namespace:operation` (every version) or `namespace:operation:version`. */
      readonly kind: 'operation';
      readonly operation: string;
    }
  | {
      /** A record identity, `namespace:operation:version:scope:target`. */
      readonly kind: 'identity';
      readonly identity: string;
    }
  | {
      /** A whole business key as logged: the identity and the input's fingerprint. */
      readonly kind: 'key';
      readonly key: string;
      readonly identity: string;
    };

/**
 * Reads a key, an identity or an operation; `undefined` when it is none of them. Escaping keeps
 * `:` out of every segment of a key, so the count of segments tells them apart.
 */
export function operatorTargetOf(text: string): OperatorTarget | undefined {
  const segments = text.split(':');
  if (segments.some((segment) => segment === '')) return undefined;
  switch (segments.length) {
    case 2:
    case 3:
      return { kind: 'operation', operation: text };
    case 5:
      return { kind: 'identity', identity: text };
    case 6:
      return { kind: 'key', key: text, identity: segments.slice(0, -1).join(':') };
    default:
      return undefined;
  }
}

/** How each kind of target is named in usage and errors, with its article. */
const TARGET_FORM: Readonly<Record<OperatorTarget['kind'], string>> = {
  key: 'a business key (ns:op:ver:scope:target:fingerprint)',
  identity: 'an identity (ns:op:ver:scope:target)',
  operation: 'an operation (ns:op:ver, or ns:op for every version)',
};

/** The targets of `kinds`, as a command names what it takes: "a …, an … or an …". */
export function targetFormsOf(kinds: ReadonlyArray<OperatorTarget['kind']>): string {
  const forms = kinds.map((kind) => TARGET_FORM[kind]);
  return forms.length === 1
    ? forms[0]!
    : `${forms.slice(0, -1).join(', ')} or ${forms[forms.length - 1]!}`;
}
