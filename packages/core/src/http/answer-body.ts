import type { StoredBody } from '../record/stored-response.js';
import { storedBodyValue } from './http-response.js';

type JsonBody = Extract<StoredBody, { kind: 'json' }>;

// A kept JSON body's wire forms, made on its first answer: a held response answers every hit.
const texts = new WeakMap<JsonBody, string>();
const bytes = new WeakMap<JsonBody, Buffer>();

/**
 * A kept body as it goes on the wire; `undefined` when it is empty. JSON stays a string: Node
 * sends a string body in one write with the headers, a buffer in a second one.
 */
export function answerPayload(body: StoredBody): string | Buffer | undefined {
  return body.kind === 'json' ? jsonText(body) : storedBodyValue(body);
}

/** A kept body's wire bytes, for a platform that sends a `Buffer` untouched (Fastify). */
export function answerBytes(body: StoredBody): Buffer | undefined {
  if (body.kind !== 'json') return storedBodyValue(body);
  let encoded = bytes.get(body);
  if (encoded === undefined) bytes.set(body, (encoded = Buffer.from(jsonText(body), 'utf8')));
  return encoded;
}

/**
 * The value the app's outer layers are handed for a kept body that answers in their place (a
 * replay, a shared result): what the body stands for, as a copy of its own, since the kept body
 * answers other calls too and a layer may change what it is handed.
 */
export function replayedBodyValue(body: StoredBody): unknown {
  switch (body.kind) {
    case 'empty':
      return undefined;
    case 'bytes':
      return Buffer.from(body.value);
    case 'json':
      return JSON.parse(jsonText(body));
  }
}

function jsonText(body: JsonBody): string {
  let text = texts.get(body);
  if (text === undefined) texts.set(body, (text = JSON.stringify(body.value)));
  return text;
}
