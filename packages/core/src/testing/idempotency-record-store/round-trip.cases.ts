import type { StoredResponse } from '../../record/stored-response.js';
import type {
  IdempotencyRecordStoreHarness,
  RecordCases,
  RecordCaseSettings,
} from './idempotency-record-store.harness.js';
import { acquired, assertReplays, digestOf, newIdentity } from './record-contract.helpers.js';
import {
  jsonResponse,
  oneMegabyteOfEveryByte,
  textResponse,
  unicodeText,
} from './stored-responses.js';

/** A stored response comes back exactly: status, headers in order, every body kind. */
export function roundTripCases({ timing }: RecordCaseSettings): RecordCases {
  const roundTrip =
    (response: StoredResponse) =>
    async ({ store }: IdempotencyRecordStoreHarness) => {
      const identity = newIdentity('round-trip');
      const lease = acquired(await store.begin(identity, digestOf('a'), timing));
      await store.complete(lease, response);
      await assertReplays(store, identity, timing, response);
    };

  return {
    'round-trips a JSON body exactly': roundTrip(jsonResponse),
    'round-trips an empty body': roundTrip({ status: 204, headers: {}, body: { kind: 'empty' } }),
    'round-trips a 1 MB binary body byte for byte': roundTrip({
      status: 200,
      headers: { 'content-type': 'application/octet-stream' },
      body: { kind: 'bytes', value: oneMegabyteOfEveryByte() },
    }),
    'round-trips Unicode text as bytes and as JSON': async (harness) => {
      await roundTrip(textResponse)(harness);
      await roundTrip({
        status: 200,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: { kind: 'json', value: { [unicodeText]: unicodeText, list: [unicodeText] } },
      })(harness);
    },
    'round-trips status and headers': roundTrip({
      status: 422,
      headers: {
        'content-type': 'application/problem+json',
        location: '/orders/77?tab=items&lang=de',
        'x-request-cost': '0',
        'x-empty': '',
        'content-disposition': "attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf",
        'x-latin1': 'café',
      },
      body: { kind: 'json', value: { type: 'about:blank', title: 'Unprocessable', status: 422 } },
    }),
  };
}
