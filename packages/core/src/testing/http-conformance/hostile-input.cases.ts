import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ProblemType } from '../../http/problem-details.js';
import type { CaseContext, CaseDefinition } from './conformance-case.js';
import {
  HostileRandom,
  hostileBodies,
  hostileKeyHeaders,
  injectionPiece,
  isPrototypePoisoned,
  isValidPayBody,
  keyHeaderVerdict,
  pollutionBodies,
  prototypeSnapshot,
} from './hostile-inputs.js';

const PROBLEM = 'application/problem+json';
/** Set `ONCELY_CONFORMANCE_SEED` to replay another draw of the hostile inputs. */
const SEED = Number(process.env.ONCELY_CONFORMANCE_SEED ?? 14);
const PAY = { orderId: 'o-1', amount: '10.00' };

/** Runs a hostile case and checks afterwards that no prototype was touched. */
function hostile(
  name: string,
  body: (context: CaseContext, random: HostileRandom) => Promise<void>,
): CaseDefinition {
  return {
    name: `${name} (seed ${SEED})`,
    tags: ['stored-data'],
    run: async (context) => {
      const before = prototypeSnapshot();
      await body(context, new HostileRandom(SEED));
      assert.equal(prototypeSnapshot(), before, 'Object.prototype was changed');
      assert.equal(({} as Record<string, unknown>).polluted, undefined, 'a prototype was polluted');
    },
  };
}

async function recordsOf(context: CaseContext): Promise<number | undefined> {
  return context.app.records?.();
}

/** Hostile keys, bodies and tenants: refused cleanly, never a 500, never crossing tenants. */
export const hostileInputCases: readonly CaseDefinition[] = [
  hostile(
    'answers every Idempotency-Key value with 201 or a 400 problem, writing only for valid keys',
    async (context, random) => {
      const { http, probe } = context;
      const accepted = new Set<string>();
      for (const header of hostileKeyHeaders(random, 200)) {
        const res = await http.post('/pay', { key: header, tenant: 't-keys', body: PAY });
        const shown = JSON.stringify(header.slice(0, 60));
        if (res.status === 431) {
          // Node's HTTP server refuses headers over 16 KiB before the framework runs.
          assert.ok(header.length > 8 * 1024, `431 for ${shown}`);
          continue;
        }
        const verdict = keyHeaderVerdict(header);
        if (verdict.valid) {
          assert.equal(res.status, 201, `${shown}: ${res.text}`);
          assert.equal(res.body?.tenant, 't-keys');
          assert.equal(
            res.headers['idempotent-replayed'] === 'true',
            accepted.has(verdict.key),
            shown,
          );
          accepted.add(verdict.key);
        } else {
          assert.equal(res.status, 400, `${shown}: ${res.text}`);
          assert.ok(res.headers['content-type']?.includes(PROBLEM), shown);
          assert.equal(res.body?.type, ProblemType.idempotencyKeyMalformed);
          if (header.length > 8)
            assert.ok(!res.text.includes(header), 'the problem echoes the raw key');
        }
      }
      assert.equal(probe.executions('pay'), accepted.size);
      const records = await recordsOf(context);
      if (records !== undefined) assert.equal(records, accepted.size);
    },
  ),
  hostile(
    'answers hostile bodies with 201, 400, 413 or 422 and never a 500, writing only for valid ones',
    async (context, random) => {
      const { http, probe, harness } = context;
      let created = 0;
      const paths = ['/pay', '/echo'];
      for (const text of hostileBodies(random, 150)) {
        const path = random.pick(paths);
        const res = await http.post(path, { key: randomUUID(), tenant: 't-bodies', rawBody: text });
        const shown = `${path} ${JSON.stringify(text.slice(0, 80))} -> ${res.status} ${res.text.slice(0, 200)}`;
        assert.ok([201, 400, 413, 422].includes(res.status), shown);
        if (res.status === 201) created += 1;
        if (Buffer.byteLength(text) > 100 * 1024) assert.equal(res.status, 413, shown);
        if (text === '') {
          const echoAnswer = harness.refusesEmptyJsonBody ? 400 : 201;
          assert.equal(res.status, path === '/echo' ? echoAnswer : 400, shown);
          continue;
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          // The platform's body parser answers these itself.
          assert.ok([400, 413].includes(res.status), shown);
          continue;
        }
        if (harness.refusesPrototypePoisoning && isPrototypePoisoned(parsed)) {
          // The platform's body parser refuses these itself.
          assert.ok([400, 413].includes(res.status), shown);
          continue;
        }
        const parsedByServer = typeof parsed === 'object' && parsed !== null && res.status !== 413;
        if (parsedByServer && res.status !== 201) {
          assert.ok(res.headers['content-type']?.includes(PROBLEM), shown);
        }
        if (path === '/pay' && parsedByServer) {
          assert.equal(res.status, isValidPayBody(parsed) ? 201 : 400, shown);
          if (res.status === 400) assert.equal(res.body?.type, ProblemType.invalidBody, shown);
        }
      }
      assert.equal(probe.executions('pay') + probe.executions('echo'), created);
      const records = await recordsOf(context);
      if (records !== undefined) assert.equal(records, created);
    },
  ),
  hostile(
    'refuses a body nested 5000 deep with 400 before anything overflows the stack',
    async ({ http, probe }) => {
      const depth = 5_000;
      for (const text of [
        '{"a":'.repeat(depth) + '1' + '}'.repeat(depth),
        `{"l":${'['.repeat(depth)}${']'.repeat(depth)}}`,
      ]) {
        const res = await http.post('/pay', { key: randomUUID(), tenant: 't-deep', rawBody: text });
        assert.equal(res.status, 400, res.text.slice(0, 200));
        assert.equal(res.body?.type, ProblemType.invalidBody);
      }
      assert.equal(probe.executions('pay'), 0);
    },
  ),
  hostile(
    'keeps prototype-pollution payloads inert, through validation and replay',
    async ({ http, harness }) => {
      for (const path of ['/pay', '/echo']) {
        for (const text of pollutionBodies()) {
          const key = randomUUID();
          const send = () => http.post(path, { key, tenant: 't-pollution', rawBody: text });
          const first = await send();
          const parsed: unknown = JSON.parse(text);
          // A platform that refuses poisoned JSON answers its own 400 before the app runs.
          const refused = harness.refusesPrototypePoisoning === true && isPrototypePoisoned(parsed);
          const valid = !refused && (path === '/echo' || isValidPayBody(parsed));
          assert.equal(first.status, valid ? 201 : 400, `${path} ${text}: ${first.text}`);
          const again = await send();
          assert.equal(again.status, first.status);
          if (valid) {
            assert.equal(again.headers['idempotent-replayed'], 'true');
            assert.equal(again.text, first.text);
          }
          assert.equal(({} as Record<string, unknown>).polluted, undefined);
        }
      }
    },
  ),
  hostile(
    "never serves one tenant another tenant's response, however keys and tenants are forged",
    async (context, random) => {
      const { http, probe } = context;
      const identities = new Set<string>();
      for (let run = 0; run < 60; run += 1) {
        const [x, y, z] = [injectionPiece(random), injectionPiece(random), injectionPiece(random)];
        const sep = random.pick([':', ',', '%3A', '%2C', '{', '}']);
        // Tenant "x<sep>y" with key "z" against tenant "x" with key "y<sep>z", and the same key
        // sent by another tenant (a guessed or leaked key).
        for (const { tenant, key } of [
          { tenant: `${x}${sep}${y}`, key: z },
          { tenant: x, key: `${y}${sep}${z}` },
          { tenant: x, key: z },
        ]) {
          const res = await http.post('/pay', { key: `"${key}"`, tenant, body: PAY });
          const identity = JSON.stringify([tenant, key]);
          assert.equal(res.status, 201, `${identity}: ${res.text}`);
          assert.equal(res.body?.tenant, tenant);
          assert.equal(
            res.headers['idempotent-replayed'] === 'true',
            identities.has(identity),
            identity,
          );
          identities.add(identity);
        }
      }
      assert.equal(probe.executions('pay'), identities.size);
      const records = await recordsOf(context);
      if (records !== undefined) assert.equal(records, identities.size);
    },
  ),
  hostile('refuses a key without a principal with 401 and writes nothing', async (context) => {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const res = await context.http.post('/pay', { key: randomUUID(), body: PAY });
      assert.equal(res.status, 401, res.text);
      assert.equal(res.body?.type, ProblemType.unauthenticated);
    }
    assert.equal(context.probe.executions('pay'), 0);
    const records = await recordsOf(context);
    if (records !== undefined) assert.equal(records, 0);
  }),
];
