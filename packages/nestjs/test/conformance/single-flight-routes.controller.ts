import {
  BadRequestException,
  Controller,
  Get,
  Param,
  Res,
  ServiceUnavailableException,
} from '@nestjs/common';
import { ConformanceProbe, CONFORMANCE_SECRET } from '@oncely/core/testing';
import { SingleFlight } from '@oncely/nestjs';
import { randomUUID } from 'node:crypto';
import { UserView } from './app-layers.js';

interface PlatformResponse {
  status?(code: number): unknown;
  code?(code: number): unknown;
}

/** The fixture contract's SingleFlight routes (see `HttpConformanceHarness`). */
@Controller()
export class SingleFlightRoutesController {
  constructor(private readonly probe: ConformanceProbe) {}

  @Get('users/:id')
  @SingleFlight({ operation: 'user-read', target: 'params.id', input: [], resultTtl: 60_000 })
  readUser(@Param('id') id: string): UserView {
    this.probe.hit(`user-read:${id}`);
    return new UserView({ id, name: 'Ada', passwordHash: CONFORMANCE_SECRET });
  }

  @Get('reports/:id')
  @SingleFlight({ operation: 'report', target: 'params.id', input: [], resultTtl: 60_000 })
  async report(@Param('id') id: string) {
    const execution = this.probe.hit(`report:${id}`);
    await this.probe.pass(`report:${id}`);
    return { id, execution, renderedBy: randomUUID() };
  }

  @Get('reports/:id/strict')
  @SingleFlight({
    operation: 'report-strict',
    target: 'params.id',
    input: [],
    onBusy: 'reject',
    resultTtl: 0,
  })
  async strict(@Param('id') id: string) {
    const execution = this.probe.hit(`strict:${id}`);
    await this.probe.pass(`strict:${id}`);
    return { id, execution };
  }

  @Get('reports/:id/invalid')
  @SingleFlight({ operation: 'report-invalid', target: 'params.id', input: [], errorTtl: 60_000 })
  invalid(@Param('id') id: string) {
    throw new BadRequestException({
      message: 'unknown report',
      execution: this.probe.hit(`invalid:${id}`),
    });
  }

  @Get('outages/:failures/:id')
  @SingleFlight({ operation: 'outage', target: 'params.id', input: [], resultTtl: 60_000 })
  async outage(@Param('failures') failures: string, @Param('id') id: string) {
    const execution = this.probe.hit(`outage:${id}`);
    await this.probe.pass(`outage:${id}`);
    if (execution <= Number(failures)) {
      throw new ServiceUnavailableException({ message: 'upstream unavailable', execution });
    }
    return { id, execution };
  }

  @Get('lookups/:status/:id')
  @SingleFlight({
    operation: 'lookup-status',
    target: 'params.id',
    input: [],
    resultTtl: 60_000,
    errorTtl: 60_000,
  })
  async lookup(
    @Param('status') status: string,
    @Param('id') id: string,
    @Res({ passthrough: true }) response: PlatformResponse,
  ) {
    const execution = this.probe.hit(`lookup:${id}`);
    await this.probe.pass(`lookup:${id}`);
    if (typeof response.code === 'function') response.code(Number(status));
    else response.status?.(Number(status));
    return { id, execution };
  }
}
