import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { UploadedFileDigests } from '../key/key.types.js';
import { BodyNotParsedError } from './body-not-parsed.error.js';

const MULTIPART = /^multipart\//i;

/** The file fields multer leaves on a request: `single` sets `file`, the others `files`. */
export interface UploadCarrier {
  readonly file?: unknown;
  readonly files?: unknown;
}

/** The part of a multer file the digest needs: its field and where its bytes are. */
interface UploadedFile {
  readonly fieldname: string;
  readonly buffer?: Uint8Array;
  readonly path?: string;
}

/**
 * The SHA-256 of every file a multipart parser (multer's shapes: `req.file`, `req.files` as a
 * list or by field) left on the request, by form field in upload order, or `undefined` at once
 * when there is none (no promise on the path of requests without files). Memory storage is
 * hashed in place; disk storage is streamed from its file, so a large upload costs a read buffer,
 * not its size. A file with neither is refused: keying it on nothing would replay one upload's
 * response for another.
 */
export function uploadedFileDigests(
  request: UploadCarrier,
  route: string,
): Promise<UploadedFileDigests> | undefined {
  if (request.file === undefined && request.files === undefined) return undefined;
  const uploaded = uploadedFilesOf(request);
  return uploaded.length === 0 ? undefined : digestsByField(uploaded, route);
}

async function digestsByField(
  uploaded: readonly UploadedFile[],
  route: string,
): Promise<UploadedFileDigests> {
  const digests = await Promise.all(uploaded.map((file) => digestOf(file, route)));
  const byField = Object.create(null) as Record<string, string[]>;
  uploaded.forEach((file, index) => {
    (byField[file.fieldname] ??= []).push(digests[index] as string);
  });
  return byField;
}

/**
 * Whether the request is a multipart one whose stream nothing has read: its files and fields are
 * still on the wire, so a key built now would miss them. Once a parser has consumed the body,
 * the stream has ended.
 */
export function isUnparsedMultipart(request: {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly readableEnded: boolean;
}): boolean {
  const type = request.headers['content-type'];
  return typeof type === 'string' && MULTIPART.test(type) && !request.readableEnded;
}

function uploadedFilesOf({ file, files }: UploadCarrier): UploadedFile[] {
  const found: unknown[] = [];
  if (isObject(file)) found.push(file);
  if (Array.isArray(files)) found.push(...(files as unknown[]));
  else if (isObject(files)) {
    for (const list of Object.values(files)) if (Array.isArray(list)) found.push(...list);
  }
  return found.filter(
    (candidate): candidate is UploadedFile =>
      isObject(candidate) && typeof candidate['fieldname'] === 'string',
  );
}

async function digestOf(file: UploadedFile, route: string): Promise<string> {
  const hash = createHash('sha256');
  if (file.buffer instanceof Uint8Array) return hash.update(file.buffer).digest('hex');
  if (typeof file.path !== 'string') throw new BodyNotParsedError(route, 'upload-not-readable');
  for await (const chunk of createReadStream(file.path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
