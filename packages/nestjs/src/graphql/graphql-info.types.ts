/**
 * The parts of graphql-js's resolver `info`, AST and schema types oncely reads, written out so
 * that `@oncely/nestjs` neither loads nor names `graphql` (an optional peer through
 * `@nestjs/graphql`). graphql-js 16 values satisfy them; types are told apart by their
 * `Symbol.toStringTag` (`GraphQLObjectType`, `GraphQLList`, …), as graphql-js itself names them.
 */

export interface AstName {
  readonly value: string;
}

export interface AstValue {
  readonly kind: string;
  readonly value?: unknown;
  readonly name?: AstName;
  readonly values?: readonly AstValue[];
  readonly fields?: readonly { readonly name: AstName; readonly value: AstValue }[];
}

export interface AstArgument {
  readonly name: AstName;
  readonly value: AstValue;
}

export interface AstDirective {
  readonly name: AstName;
  readonly arguments?: readonly AstArgument[];
}

export interface AstSelectionSet {
  readonly selections: readonly AstSelection[];
}

/** A field, an inline fragment or a fragment spread (`kind` says which). */
export interface AstSelection {
  readonly kind: string;
  readonly name?: AstName;
  readonly alias?: AstName;
  readonly arguments?: readonly AstArgument[];
  readonly directives?: readonly AstDirective[];
  readonly typeCondition?: { readonly name: AstName };
  readonly selectionSet?: AstSelectionSet;
}

export interface AstFragment {
  readonly typeCondition: { readonly name: AstName };
  readonly selectionSet: AstSelectionSet;
}

export interface SchemaField {
  readonly type: SchemaType;
  resolve?: (source: unknown, args: unknown, context: unknown, info: FieldInfo) => unknown;
}

/** Any graphql-js type: named ones have a `name`, wrappers (`List`, `NonNull`) an `ofType`. */
export interface SchemaType {
  readonly [Symbol.toStringTag]: string;
  readonly name?: string;
  readonly ofType?: SchemaType;
  getFields?(): Record<string, SchemaField>;
  getValue?(name: string): { readonly value: unknown } | undefined | null;
  parseValue?(value: unknown): unknown;
  serialize?(value: unknown): unknown;
  isTypeOf?: ((value: unknown, context: unknown, info: FieldInfo) => unknown) | null;
  resolveType?:
    ((value: unknown, context: unknown, info: FieldInfo, type: unknown) => unknown) | null;
}

export interface GraphQLSchemaLike {
  getType(name: string): SchemaType | undefined | null;
  getPossibleTypes(type: SchemaType): readonly SchemaType[];
}

export interface ResponsePathLink {
  readonly prev: ResponsePathLink | undefined;
  readonly key: string | number;
}

/** A resolver's `info`, as far as oncely reads it. */
export interface FieldInfo {
  readonly fieldName: string;
  readonly fieldNodes: readonly AstSelection[];
  readonly returnType: SchemaType;
  readonly path: ResponsePathLink;
  readonly schema: GraphQLSchemaLike;
  readonly fragments: Readonly<Record<string, AstFragment>>;
  readonly variableValues: Readonly<Record<string, unknown>>;
}

/** `[Payment!]!` → `Payment`. */
export function namedTypeOf(type: SchemaType): SchemaType {
  let named = type;
  while (named.ofType) named = named.ofType;
  return named;
}

/** Where a field's value sits in the response: `['createPayment']`, `['a', 0, 'b']`. */
export type ResponsePath = readonly (string | number)[];

export function responsePathOf(link: ResponsePathLink): ResponsePath {
  const path: (string | number)[] = [];
  for (let at: ResponsePathLink | undefined = link; at; at = at.prev) path.unshift(at.key);
  return path;
}
