import type { RegistryClaim } from '@oncely/core';
import { claimIdOf, type RegistryDocument } from './registry-document.js';

/** One field of a claim that differs; `undefined` where the field is absent. */
export interface FieldChange {
  /** Dotted, e.g. `ttl.retention`. */
  readonly path: string;
  /** The file's value. */
  readonly was: unknown;
  /** The app's value. */
  readonly now: unknown;
}

/** How the app's claims differ from the file's. */
export type RegistryChange =
  | {
      /** The app is another service than the file's. */
      readonly kind: 'service';
      /** The file's service. */
      readonly was: string;
      /** The app's service. */
      readonly now: string;
    }
  | {
      /** A claim of the app the file lacks. */
      readonly kind: 'added';
      /** The claim's id (`claimIdOf`). */
      readonly id: string;
      /** The app's claim. */
      readonly claim: RegistryClaim;
    }
  | {
      /** A claim of the file the app no longer makes. */
      readonly kind: 'removed';
      /** The claim's id (`claimIdOf`). */
      readonly id: string;
      /** The file's claim. */
      readonly claim: RegistryClaim;
    }
  | {
      /** A claim both list, with other values. */
      readonly kind: 'changed';
      /** The claim's id (`claimIdOf`). */
      readonly id: string;
      /** Each value that differs. */
      readonly fields: readonly FieldChange[];
    };

/**
 * What changed from the file's claims (`was`) to the app's (`now`). A claim is matched by its
 * mechanism, operation (namespace, name, version) and route: a renamed operation or route is one
 * claim removed and one added. Empty when they agree.
 */
export function diffRegistries(was: RegistryDocument, now: RegistryDocument): RegistryChange[] {
  const changes: RegistryChange[] = [];
  if (was.service !== now.service) {
    changes.push({ kind: 'service', was: was.service, now: now.service });
  }
  const before = new Map(was.claims.map((claim) => [claimIdOf(claim), claim]));
  const after = new Map(now.claims.map((claim) => [claimIdOf(claim), claim]));
  for (const [id, claim] of after) {
    const old = before.get(id);
    if (!old) {
      changes.push({ kind: 'added', id, claim });
      continue;
    }
    const fields = fieldChanges(old, claim);
    if (fields.length > 0) changes.push({ kind: 'changed', id, fields });
  }
  for (const [id, claim] of before) {
    if (!after.has(id)) changes.push({ kind: 'removed', id, claim });
  }
  return changes;
}

/** The changes as `oncely registry check` prints them, one line per claim or field. */
export function describeChanges(changes: readonly RegistryChange[]): string {
  const lines: string[] = [];
  for (const change of changes) {
    switch (change.kind) {
      case 'service':
        lines.push(`  service   ${show(change.was)} -> ${show(change.now)}`);
        break;
      case 'added':
      case 'removed':
        lines.push(`  ${change.kind.padEnd(9)} ${change.id}`);
        break;
      case 'changed':
        lines.push(`  changed   ${change.id}`);
        for (const field of change.fields) {
          lines.push(`              ${field.path}: ${show(field.was)} -> ${show(field.now)}`);
        }
    }
  }
  return `${lines.join('\n')}\n`;
}

function fieldChanges(was: RegistryClaim, now: RegistryClaim): FieldChange[] {
  const before = leavesOf(was);
  const after = leavesOf(now);
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort();
  return paths
    .filter((path) => before.get(path) !== after.get(path))
    .map((path) => ({ path, was: parsed(before.get(path)), now: parsed(after.get(path)) }));
}

/** Every field as JSON text by its dotted path; lists compare whole. */
function leavesOf(value: unknown, prefix = '', leaves = new Map<string, string>()) {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [key, child] of Object.entries(value)) {
      leavesOf(child, prefix === '' ? key : `${prefix}.${key}`, leaves);
    }
  } else if (value !== undefined) {
    leaves.set(prefix, JSON.stringify(value));
  }
  return leaves;
}

function parsed(json: string | undefined): unknown {
  return json === undefined ? undefined : JSON.parse(json);
}

function show(value: unknown): string {
  return value === undefined ? '(none)' : JSON.stringify(value);
}
