import type { Oncely } from '@oncely/express';
import type { ConformanceProbe } from '@oncely/core/testing';
import type { Router } from 'express';
import { handler } from './app-layers.js';

/** The fixture contract's routes for HEAD and OPTIONS (see `HttpConformanceHarness`). */
export function mountReadMethodRoutes(app: Router, oncely: Oncely, probe: ConformanceProbe): void {
  app.get(
    '/exports/:id',
    oncely.idempotent({ operation: 'export', scope: 'user.tenantId', target: 'params.id' }),
    handler((req, res) => {
      const id = String(req.params.id);
      res.json({ id, execution: probe.hit(`export:${id}`) });
    }),
  );
  app.all(
    '/preflights/:id',
    oncely.idempotent({ operation: 'preflight', idempotencyKey: 'ignored', target: 'params.id' }),
    oncely.singleFlight({
      operation: 'preflight-flight',
      target: 'params.id',
      input: [],
      resultTtl: 60_000,
    }),
    handler(async (req, res) => {
      const id = String(req.params.id);
      const execution = probe.hit(`preflight:${id}`);
      if (req.method === 'OPTIONS') await probe.pass(`preflight:${id}`);
      res.json({ id, method: req.method, execution });
    }),
  );
}
