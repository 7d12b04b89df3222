import type { ServerResponse } from 'node:http';

/**
 * Applies what an app passed to `res.writeHead(status[, reason][, headers])` to the response's
 * status and headers without sending anything, so a held response ends with what the app meant
 * to send: headers given as an object are set, raw pairs replace any set before.
 */
export function applyWriteHead(
  res: ServerResponse,
  status: unknown,
  reason: unknown,
  headers: unknown,
): void {
  res.statusCode = status as number;
  if (typeof reason === 'string') res.statusMessage = reason;
  const fields = typeof reason === 'string' ? headers : reason;
  if (Array.isArray(fields)) {
    // Raw form, as Node takes it: [name, value, name, value, …] (or [[name, value], …]);
    // repeated names stay repeated, and replace what was set before.
    const pairs: unknown[][] = Array.isArray(fields[0])
      ? (fields as unknown[][])
      : fields.flatMap((_, i) => (i % 2 === 0 ? [fields.slice(i, i + 2)] : []));
    for (const [name] of pairs) res.removeHeader(String(name));
    for (const [name, value] of pairs) res.appendHeader(String(name), value as string);
  } else if (typeof fields === 'object' && fields !== null) {
    for (const [name, value] of Object.entries(fields)) {
      if (value !== undefined) res.setHeader(name, value as string);
    }
  }
}
