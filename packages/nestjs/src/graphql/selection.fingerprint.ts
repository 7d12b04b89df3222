import { createHash } from 'node:crypto';
import {
  namedTypeOf,
  type AstArgument,
  type AstDirective,
  type AstSelection,
  type AstSelectionSet,
  type AstValue,
  type FieldInfo,
  type SchemaType,
} from './graphql-info.types.js';

/**
 * A hash of what a field's selection set asks for, as the executed subtree depends on it:
 * response keys (aliases), field names, arguments and directives with variables substituted,
 * sub-selections. Two spellings of one selection hash alike: fragments are resolved, and one
 * whose type condition is the enclosing type (and has no directives) is merged into it; fields
 * are compared in any order. Type conditions on other types are kept, as they select per type.
 */
export function selectionFingerprint(info: FieldInfo): string {
  const walk = new SelectionWalk(info);
  const parent = namedTypeOf(info.returnType);
  const canonical = info.fieldNodes.flatMap((node) => walk.entries(node.selectionSet, parent));
  return createHash('sha256').update(canonical.sort().join('\n')).digest('hex');
}

class SelectionWalk {
  constructor(private readonly info: FieldInfo) {}

  /** Each selection as canonical text, fragments on `parent` merged in. */
  entries(set: AstSelectionSet | undefined, parent: SchemaType | undefined): string[] {
    if (!set) return [];
    return set.selections.flatMap((selection) => this.entry(selection, parent));
  }

  private entry(selection: AstSelection, parent: SchemaType | undefined): string[] {
    if (selection.kind === 'Field') {
      const name = selection.name?.value ?? '';
      const type = parent?.getFields?.()[name]?.type;
      return [
        text({
          key: selection.alias?.value ?? name,
          field: name,
          args: this.arguments(selection.arguments),
          directives: this.directives(selection.directives),
          selection: this.entries(selection.selectionSet, type && namedTypeOf(type)).sort(),
        }),
      ];
    }
    const fragment =
      selection.kind === 'FragmentSpread'
        ? this.info.fragments[selection.name?.value ?? '']
        : { typeCondition: selection.typeCondition, selectionSet: selection.selectionSet };
    const on = fragment?.typeCondition?.name.value;
    const directives = this.directives(selection.directives);
    if ((on === undefined || on === parent?.name) && directives.length === 0) {
      return this.entries(fragment?.selectionSet, parent);
    }
    const type = on === undefined ? parent : (this.info.schema.getType(on) ?? undefined);
    return [text({ on, directives, selection: this.entries(fragment?.selectionSet, type).sort() })];
  }

  private arguments(args: readonly AstArgument[] = []): [string, unknown][] {
    return args
      .map((arg): [string, unknown] => [arg.name.value, this.value(arg.value)])
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  private directives(directives: readonly AstDirective[] = []): [string, unknown][] {
    return directives.map((directive) => [
      directive.name.value,
      this.arguments(directive.arguments),
    ]);
  }

  private value(node: AstValue): unknown {
    switch (node.kind) {
      case 'Variable':
        return this.info.variableValues[node.name?.value ?? ''] ?? null;
      case 'IntValue':
      case 'FloatValue':
        return Number(node.value);
      case 'NullValue':
        return null;
      case 'ListValue':
        return (node.values ?? []).map((item) => this.value(item));
      case 'ObjectValue':
        return Object.fromEntries(
          (node.fields ?? [])
            .map((field): [string, unknown] => [field.name.value, this.value(field.value)])
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        );
      default:
        return node.value;
    }
  }
}

/** JSON, with the BigInts a custom scalar's variable may hold written as text. */
function text(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === 'bigint' ? `${item}n` : item,
  );
}
