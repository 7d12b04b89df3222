import { BodyNotParsedError, buildKey, type KeySpec } from '@oncely/core';
import { isUnparsedMultipart, uploadedFileDigests } from '../../src/http/uploaded-files.js';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('uploadedFileDigests', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'oncely-upload-'));
  });

  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('answers undefined at once, with no promise, for a request without files', () => {
    expect(uploadedFileDigests({}, 'R')).toBeUndefined();
    expect(uploadedFileDigests({ files: [] }, 'R')).toBeUndefined();
  });

  it("hashes multer's memory and disk files by field, in upload order, in every shape it sets", async () => {
    const onDisk = join(dir, 'scan.pdf');
    // Larger than a read buffer, so the digest is streamed in several chunks.
    const large = 'x'.repeat(200_000);
    await writeFile(onDisk, large);
    const single = { fieldname: 'document', buffer: Buffer.from('invoice') };
    const list = [
      { fieldname: 'pages', buffer: Buffer.from('p1') },
      { fieldname: 'pages', path: onDisk },
      { fieldname: 'cover', buffer: Buffer.from('c') },
    ];

    expect(await uploadedFileDigests({ file: single }, 'R')).toEqual({
      document: [sha256('invoice')],
    });
    expect(await uploadedFileDigests({ files: list }, 'R')).toEqual({
      pages: [sha256('p1'), sha256(large)],
      cover: [sha256('c')],
    });
    expect(
      await uploadedFileDigests({ files: { pages: list.slice(0, 2), cover: [list[2]] } }, 'R'),
    ).toEqual({ pages: [sha256('p1'), sha256(large)], cover: [sha256('c')] });
  });

  it('refuses a file with neither bytes nor a path (a custom storage engine), naming the fix', async () => {
    const stored = { fieldname: 'document', location: 's3://bucket/key' };

    const digests = uploadedFileDigests({ file: stored }, 'POST /documents');

    await expect(digests).rejects.toThrow(BodyNotParsedError);
    await expect(digests).rejects.toMatchObject({
      route: 'POST /documents',
      reason: 'upload-not-readable',
      message: expect.stringMatching(/neither a buffer nor a path/),
    });
  });

  it('puts the files in the default fingerprint, and leaves a request without files as it was', () => {
    const spec: KeySpec = { namespace: 'n', operation: 'upload' };
    const body = { amount: '10.00' };
    const files = { document: [sha256('invoice')] };

    const plain = buildKey(spec, { body });
    expect(buildKey({ ...spec, input: ['body'] }, { body }).digest).toBe(plain.digest);
    expect(buildKey(spec, { body, files }).digest).not.toBe(plain.digest);
    expect(buildKey(spec, { body, files: { document: [sha256('other')] } }).digest).not.toBe(
      buildKey(spec, { body, files }).digest,
    );
  });
});

describe('isUnparsedMultipart', () => {
  const request = (contentType: string | undefined, read: boolean) => {
    const stream = Readable.from(['--b\r\n']);
    if (read) stream.resume();
    return Object.assign(stream, { headers: { 'content-type': contentType } });
  };

  it('is true for a multipart body nothing has read, whatever the letter case', () => {
    expect(isUnparsedMultipart(request('multipart/form-data; boundary=b', false))).toBe(true);
    expect(isUnparsedMultipart(request('Multipart/Form-Data; boundary=b', false))).toBe(true);
  });

  it('is false once a parser read it, and for any other body', async () => {
    const read = request('multipart/form-data; boundary=b', true);
    await new Promise((resolve) => read.on('end', resolve));

    expect(isUnparsedMultipart(read)).toBe(false);
    expect(isUnparsedMultipart(request('application/json', false))).toBe(false);
    expect(isUnparsedMultipart(request(undefined, false))).toBe(false);
  });
});
