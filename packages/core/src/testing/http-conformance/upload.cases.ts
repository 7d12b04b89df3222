import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ProblemType } from '../../http/problem-details.js';
import { assertNotReplayed, assertProblem, assertReplayOf } from './assertions.js';
import type { CaseContext, CaseDefinition } from './conformance-case.js';

/** A multipart upload as a browser form sends it: file field `document`, text field `amount`. */
function uploadForm(contents: string, amount: string): FormData {
  const form = new FormData();
  form.append('amount', amount);
  form.append('document', new Blob([contents], { type: 'application/pdf' }), 'invoice.pdf');
  return form;
}

/**
 * The same upload under the same key replays; another file, or another amount, under that key is
 * 422; the handler ran once and saw the upload.
 */
async function assertKeyedOnUpload(
  { http, probe, app }: CaseContext,
  path: string,
  operation: string,
): Promise<void> {
  const key = randomUUID();
  const tenant = 't-uploads';
  const first = await http.post(path, { key, tenant, form: uploadForm('invoice #1', '10.00') });
  assert.equal(first.status, 201, first.text);
  assertNotReplayed(first);
  assert.deepEqual(first.body, { execution: 1, size: 10, amount: '10.00' });
  const again = await http.post(path, { key, tenant, form: uploadForm('invoice #1', '10.00') });
  assertReplayOf(again, first);
  const otherFile = await http.post(path, { key, tenant, form: uploadForm('invoice #2', '10.00') });
  assertProblem(otherFile, 422, ProblemType.payloadMismatch);
  const otherAmount = await http.post(path, {
    key,
    tenant,
    form: uploadForm('invoice #1', '99.00'),
  });
  assertProblem(otherAmount, 422, ProblemType.payloadMismatch);
  assert.equal(probe.executions(operation), 1);
  if (app.records) assert.equal(await app.records(), 1);
}

/**
 * Bodies produced by the route's own parser (multer): the key is built from what the handler
 * receives, each file by the SHA-256 of its bytes, never from a body that is not there yet.
 */
export const uploadCases: readonly CaseDefinition[] = [
  {
    name: 'an upload parsed by multer, without a DTO: the same upload replays, another file or amount under its key is 422',
    needs: ['multipart-uploads'],
    tags: ['stored-data'],
    run: (context) => assertKeyedOnUpload(context, '/uploads', 'upload'),
  },
  {
    name: 'an upload parsed by multer into a DTO: a bad field is 400 before anything runs, then the same upload replays and another file is 422',
    needs: ['multipart-uploads'],
    run: async (context) => {
      const { http, probe } = context;
      const form = new FormData();
      form.append('amount', 'ten');
      form.append('document', new Blob(['invoice #1']), 'invoice.pdf');
      const invalid = await http.post('/uploads/typed', { key: randomUUID(), tenant: 't', form });
      assertProblem(invalid, 400, ProblemType.invalidBody);
      assert.equal(probe.executions('upload-typed'), 0);
      await assertKeyedOnUpload(context, '/uploads/typed', 'upload-typed');
    },
  },
  {
    name: 'an upload multer stores on disk is hashed from its file: the same upload replays, another file is 422',
    needs: ['multipart-uploads'],
    run: (context) => assertKeyedOnUpload(context, '/uploads/disk', 'upload-disk'),
  },
  {
    name: 'an upload parsed after oncely by a parser it was not told of: 500 body-not-parsed, nothing run or kept',
    needs: ['multipart-uploads'],
    run: async ({ http, probe, app }) => {
      const form = uploadForm('invoice #1', '10.00');
      const response = await http.post('/uploads/unparsed', {
        key: randomUUID(),
        tenant: 't',
        form,
      });
      assertProblem(response, 500, ProblemType.bodyNotParsed);
      assert.match(String(response.body?.detail), /multipart body was not parsed/);
      assert.equal(probe.executions('upload-unparsed'), 0);
      if (app.records) assert.equal(await app.records(), 0);
    },
  },
  {
    name: 'an upload parsed by a parser the route declares (Nest keyAfterInterceptors, Express its own order): keyed on the upload',
    needs: ['multipart-uploads'],
    run: (context) => assertKeyedOnUpload(context, '/uploads/declared', 'upload-declared'),
  },
  {
    name: 'ten identical uploads at once under one key: 1 execution, the others 409 or the replay',
    needs: ['multipart-uploads'],
    run: async ({ http, probe }) => {
      const key = randomUUID();
      const responses = await Promise.all(
        Array.from({ length: 10 }, () =>
          http.post('/uploads', { key, tenant: 't', form: uploadForm('invoice #1', '10.00') }),
        ),
      );
      assert.equal(probe.executions('upload'), 1);
      const created = responses.filter((r) => r.status === 201);
      assert.ok(created.length >= 1, responses.map((r) => r.status).join());
      for (const response of responses) assert.ok([201, 409].includes(response.status));
    },
  },
];
