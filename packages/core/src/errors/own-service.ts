/**
 * Whether `name`, found on a record, a lease, a cached result or a registered claim, is this
 * service's own: `service` itself, or one of `aliases` (the `serviceAliases` option, while the
 * service is renamed). `service` is compared first, and apps without aliases pass none, so their
 * check costs what it did before aliases existed.
 */
export function isOwnService(
  name: string,
  service: string,
  aliases: ReadonlySet<string> | undefined,
): boolean {
  return name === service || (aliases !== undefined && aliases.has(name));
}
