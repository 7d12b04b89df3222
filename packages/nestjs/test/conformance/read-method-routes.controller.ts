import { All, Controller, Get, Param, Req } from '@nestjs/common';
import { ConformanceProbe } from '@oncely/core/testing';
import { IdempotentKey, SingleFlight } from '@oncely/nestjs';

/** The fixture contract's routes for HEAD and OPTIONS (see `HttpConformanceHarness`). */
@Controller()
export class ReadMethodRoutesController {
  constructor(private readonly probe: ConformanceProbe) {}

  @Get('exports/:id')
  @IdempotentKey({ operation: 'export', scope: 'user.tenantId', target: 'params.id' })
  exportOne(@Param('id') id: string) {
    return { id, execution: this.probe.hit(`export:${id}`) };
  }

  @All('preflights/:id')
  @IdempotentKey({ operation: 'preflight', idempotencyKey: 'ignored', target: 'params.id' })
  @SingleFlight({
    operation: 'preflight-flight',
    target: 'params.id',
    input: [],
    resultTtl: 60_000,
  })
  async preflight(@Param('id') id: string, @Req() request: { method: string }) {
    const execution = this.probe.hit(`preflight:${id}`);
    if (request.method === 'OPTIONS') await this.probe.pass(`preflight:${id}`);
    return { id, method: request.method, execution };
  }
}
