import type { RegistryClaim } from '@oncely/core';
import { Document, parse } from 'yaml';
import { RegistryFileError } from './registry-file.error.js';

/** What the first key of a registry file says, so a later format can be told apart. */
export const REGISTRY_FORMAT = 'oncely-registry/v1';

/** Where `oncely registry` reads and writes when `--file` is not given. */
export const DEFAULT_REGISTRY_FILE = 'oncely.registry.yaml';

/** A service's claims, as its registry file holds them. */
export interface RegistryDocument {
  /** The service owning the claims. */
  readonly service: string;
  /** Its claims, sorted as the file lists them. */
  readonly claims: readonly RegistryClaim[];
}

const HEADER = [
  ' oncely registry: every operation this service claims, and how its keys are built.',
  ' Written by `oncely registry export`; `oncely registry check` fails while the app claims',
  ' anything else, so a new or changed claim is reviewed with the change that makes it.',
  ' Durations (ttl, maxDuration) are milliseconds.',
].join('\n');

/** The fields naming a claim, each a string in every well-formed entry. */
const IDENTITY_FIELDS = ['mechanism', 'namespace', 'operation', 'version', 'route'] as const;

/** `idempotency shop:order-create:v1 at OrdersController.create (POST /orders)`. */
export function claimIdOf(claim: RegistryClaim): string {
  return `${claim.mechanism} ${claim.namespace}:${claim.operation}:${claim.version} at ${claim.route}`;
}

/** The app's claims in the file's order: by operation, then mechanism, then route. */
export function registryDocumentOf(
  service: string,
  claims: readonly RegistryClaim[],
): RegistryDocument {
  return { service, claims: [...claims].sort(compareClaims) };
}

/**
 * The file's text: a header comment, then the document. Keys keep the order `RegistryClaim`
 * declares them in and claims are sorted, so equal claims always give the same bytes. Lines are
 * never folded, so a changed description is a one-line diff.
 */
export function renderRegistry(document: RegistryDocument): string {
  const yaml = new Document({
    format: REGISTRY_FORMAT,
    service: document.service,
    claims: registryDocumentOf(document.service, document.claims).claims,
  });
  yaml.commentBefore = HEADER;
  return yaml.toString({ lineWidth: 0 });
}

/** Reads a registry file's text; `file` names it in errors. */
export function parseRegistry(text: string, file: string): RegistryDocument {
  let value: unknown;
  try {
    value = parse(text);
  } catch (error) {
    throw new RegistryFileError(file, `is not valid YAML: ${(error as Error).message}`);
  }
  const document = value as Partial<Record<'format' | 'service' | 'claims', unknown>> | null;
  if (typeof document !== 'object' || document === null || document.format !== REGISTRY_FORMAT) {
    throw new RegistryFileError(
      file,
      `is not an oncely registry: it must start with "format: ${REGISTRY_FORMAT}". Write it with oncely registry export.`,
    );
  }
  if (typeof document.service !== 'string' || !Array.isArray(document.claims)) {
    throw new RegistryFileError(file, 'must have a "service" name and a list of "claims".');
  }
  document.claims.forEach((claim: unknown, index) => {
    const fields = claim as Record<string, unknown> | null;
    const missing = IDENTITY_FIELDS.find((field) => typeof fields?.[field] !== 'string');
    if (missing) {
      throw new RegistryFileError(file, `claim #${index + 1} has no "${missing}".`);
    }
  });
  return document as unknown as RegistryDocument;
}

function compareClaims(a: RegistryClaim, b: RegistryClaim): number {
  for (const field of ['namespace', 'operation', 'version', 'mechanism', 'route'] as const) {
    if (a[field] !== b[field]) return a[field] < b[field] ? -1 : 1;
  }
  return 0;
}
