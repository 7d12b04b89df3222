import { InvalidBodyError } from '@oncely/core';
import type { ConformanceProbe } from '@oncely/core/testing';
import type { Oncely } from '@oncely/express';
import type { Router } from 'express';
import multer from 'multer';
import { tmpdir } from 'node:os';
import { handler, type AuthedRequest } from './app-layers.js';

const scope = 'user.tenantId';
const inMemory = multer().single('document');
const onDisk = multer({ storage: multer.diskStorage({ destination: tmpdir() }) }).single(
  'document',
);

function validateUpload(body: unknown) {
  const amount = (body as { amount?: unknown } | undefined)?.amount;
  if (typeof amount !== 'string' || !/^\d{1,9}\.\d{2}$/.test(amount)) {
    throw new InvalidBodyError([{ property: 'amount', messages: ['amount must be like 10.00'] }]);
  }
  return { amount };
}

/** The fixture contract's upload routes (see `HttpConformanceHarness`), multer as its docs show. */
export function mountUploadRoutes(app: Router, oncely: Oncely, probe: ConformanceProbe): void {
  const answer = (operation: string) =>
    handler((req: AuthedRequest, res) => {
      const { file, body } = req as AuthedRequest & { file: Express.Multer.File };
      const { amount } = body as { amount?: string };
      res.status(201).json({ execution: probe.hit(operation), size: file.size, amount });
    });
  app.post(
    '/uploads',
    inMemory,
    oncely.idempotent({ operation: 'upload', scope }),
    answer('upload'),
  );
  app.post(
    '/uploads/typed',
    inMemory,
    oncely.idempotent({ operation: 'upload-typed', scope, validate: validateUpload }),
    answer('upload-typed'),
  );
  app.post(
    '/uploads/disk',
    onDisk,
    oncely.idempotent({ operation: 'upload-disk', scope }),
    answer('upload-disk'),
  );
  app.post(
    '/uploads/unparsed',
    oncely.idempotent({ operation: 'upload-unparsed', scope }),
    inMemory,
    answer('upload-unparsed'),
  );
  app.post(
    '/uploads/declared',
    inMemory,
    oncely.idempotent({ operation: 'upload-declared', scope }),
    answer('upload-declared'),
  );
}
