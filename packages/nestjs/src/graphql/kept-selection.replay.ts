import {
  namedTypeOf,
  type FieldInfo,
  type GraphQLSchemaLike,
  type SchemaField,
  type SchemaType,
} from './graphql-info.types.js';

const KEPT = Symbol('oncely:kept-selection');
const BUILT_IN_SCALARS = new Set(['Int', 'Float', 'String', 'Boolean', 'ID']);

/** Fields, object types and abstract types already answering kept selections. */
const prepared = new WeakSet<object>();

interface KeptObject {
  readonly data: Record<string, unknown>;
  readonly typename: string | undefined;
}

/**
 * What a replayed field's resolver hands graphql-js instead of running anything: the kept
 * executed subtree, turned back into values graphql-js serialises without error (an enum's
 * internal value for its name, a custom scalar's parsed value), objects wrapped so that every
 * field below answers from the kept data by its response key. No field resolver of the app runs
 * for a replay; the response under the field is then replaced with the kept JSON as it was sent
 * (`ExecutedResultCapture`), so what graphql-js makes of it here only has to be error-free.
 */
export function replayedValue(kept: unknown, type: SchemaType, schema: GraphQLSchemaLike): unknown {
  answerKeptSelections(type, schema);
  return valueFor(kept, type, schema);
}

function valueFor(kept: unknown, type: SchemaType, schema: GraphQLSchemaLike): unknown {
  if (kept === null || kept === undefined) return null;
  switch (type[Symbol.toStringTag]) {
    case 'GraphQLNonNull':
      return valueFor(kept, type.ofType as SchemaType, schema);
    case 'GraphQLList':
      return Array.isArray(kept)
        ? kept.map((item) => valueFor(item, type.ofType as SchemaType, schema))
        : null;
    case 'GraphQLEnumType':
      return typeof kept === 'string' ? (type.getValue?.(kept)?.value ?? kept) : kept;
    case 'GraphQLScalarType':
      return BUILT_IN_SCALARS.has(type.name ?? '') ? kept : parsedScalar(kept, type);
    default:
      return typeof kept === 'object'
        ? keptObject(kept as Record<string, unknown>, type, schema)
        : null;
  }
}

/** The internal value a custom scalar serialises back to `kept`, or `kept` if it has none. */
function parsedScalar(kept: unknown, type: SchemaType): unknown {
  try {
    const parsed = type.parseValue?.(kept);
    type.serialize?.(parsed);
    return parsed;
  } catch {
    return kept;
  }
}

/**
 * An object graphql-js resolves fields on: graphql-js's default resolver calls a function-valued
 * property with the field's `info`, so each of the type's fields is a resolver reading the kept
 * data at the response key (which tells aliases of one field apart). Nothing else is there: no
 * `then` or `subscribe` to be taken for a promise or an observable on the way out of Nest.
 */
function keptObject(
  data: Record<string, unknown>,
  type: SchemaType,
  schema: GraphQLSchemaLike,
): object {
  const objectTypes =
    type[Symbol.toStringTag] === 'GraphQLObjectType' ? [type] : schema.getPossibleTypes(type);
  const typename = typeof data.__typename === 'string' ? data.__typename : objectTypes[0]?.name;
  const fields = new Set(objectTypes.flatMap((object) => Object.keys(object.getFields?.() ?? {})));
  const kept: KeptObject = { data, typename };
  return new Proxy(kept, {
    get(target, property) {
      if (property === KEPT) return target;
      if (property === '__typename') return target.typename;
      if (typeof property !== 'string' || property === 'then' || !fields.has(property)) {
        return undefined;
      }
      return (_args: unknown, _context: unknown, info: FieldInfo) => keptField(target, info);
    },
  });
}

function keptOf(source: unknown): KeptObject | undefined {
  return typeof source === 'object' && source !== null
    ? ((source as { [KEPT]?: KeptObject })[KEPT] ?? undefined)
    : undefined;
}

function keptField(kept: KeptObject, info: FieldInfo): unknown {
  return valueFor(kept.data[info.path.key], info.returnType, info.schema);
}

/**
 * Makes the types a kept selection may reach answer it without the app's code: a field with its
 * own resolver (`@ResolveField()`), an `isTypeOf` and a `resolveType` each get a wrapper that
 * answers a kept object and calls the original for anything else. Done once per type, in place,
 * as Apollo Server wraps resolvers for its own `willResolveField` hooks.
 */
function answerKeptSelections(type: SchemaType, schema: GraphQLSchemaLike): void {
  const pending = [namedTypeOf(type)];
  while (pending.length > 0) {
    const named = pending.pop() as SchemaType;
    if (prepared.has(named)) continue;
    prepared.add(named);
    const tag = named[Symbol.toStringTag];
    if (tag === 'GraphQLInterfaceType' || tag === 'GraphQLUnionType') {
      wrapResolveType(named);
      pending.push(...schema.getPossibleTypes(named));
    }
    if (tag === 'GraphQLObjectType') wrapIsTypeOf(named);
    for (const field of Object.values(named.getFields?.() ?? {})) {
      wrapResolve(field);
      pending.push(namedTypeOf(field.type));
    }
  }
}

function wrapResolve(field: SchemaField): void {
  const resolve = field.resolve;
  if (!resolve || prepared.has(field)) return;
  prepared.add(field);
  field.resolve = (source, args, context, info) => {
    const kept = keptOf(source);
    return kept ? keptField(kept, info) : resolve(source, args, context, info);
  };
}

function wrapIsTypeOf(type: SchemaType): void {
  const isTypeOf = type.isTypeOf;
  if (!isTypeOf) return;
  type.isTypeOf = (value, context, info) =>
    keptOf(value) ? true : isTypeOf.call(type, value, context, info);
}

function wrapResolveType(type: SchemaType): void {
  const resolveType = type.resolveType;
  if (!resolveType) return;
  type.resolveType = (value, context, info, abstractType) => {
    const kept = keptOf(value);
    return kept ? kept.typename : resolveType.call(type, value, context, info, abstractType);
  };
}
