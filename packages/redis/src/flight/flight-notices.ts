/**
 * The messages on a key prefix's notice channel: a tag character, then the business key. A
 * release (the lease is free: completion, release, force-release) wakes the key's waiters; an
 * eviction (an operator deleted its cached outcome) also makes every process drop its
 * near-cached copy.
 */
export type NoticeKind = 'released' | 'evicted';

const tags: Record<NoticeKind, string> = { released: 'r', evicted: 'e' };

export function noticeMessage(kind: NoticeKind, businessKey: string): string {
  return `${tags[kind]}${businessKey}`;
}

/** The kind and business key of a message, or undefined for one in no known format. */
export function parseNotice(
  message: string,
): { readonly kind: NoticeKind; readonly key: string } | undefined {
  const kind = message[0] === 'r' ? 'released' : message[0] === 'e' ? 'evicted' : undefined;
  return kind && { kind, key: message.slice(1) };
}
