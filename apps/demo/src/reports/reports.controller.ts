import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { SingleFlight } from '@oncely/nestjs';
import { createHash, randomUUID } from 'node:crypto';
import { DemoRoute } from '../identity/demo-route.decorator.js';
import type { DemoRequest } from '../identity/demo-principal.js';
import { ApiProblemResponses } from '../problems/api-problem-responses.decorator.js';
import { Problems } from '../problems/documented-problems.js';
import { simulateWork } from '../simulation/simulate-work.js';
import { ExecutionStats } from '../stats/execution-stats.service.js';
import { ExportReportDto, ReportDto, reportDays, type ReportRowDto } from './export-report.dto.js';

export const REPORT_EXPORT = 'report-export';
const TEN_MINUTES = 10 * 60 * 1000;

@ApiTags('reports')
@Controller('reports')
export class ReportsController {
  constructor(private readonly stats: ExecutionStats) {}

  /**
   * Expensive and read-only: concurrent identical exports run once and share the result, which
   * stays cached for 10 minutes. The report type is the target; dates and filters the input.
   */
  @Post('export')
  @HttpCode(200)
  @DemoRoute('none')
  @SingleFlight({
    operation: REPORT_EXPORT,
    scope: 'user.tenantId',
    target: 'body.reportType',
    input: ['body.from', 'body.to', 'body.filters'],
    resultTtl: TEN_MINUTES,
    description: "Exports a tenant's report once for concurrent callers, cached ten minutes",
  })
  @ApiOperation({ summary: 'Export a report (SingleFlight, cached 10 min)' })
  @ApiOkResponse({ type: ReportDto })
  @ApiProblemResponses(
    Problems.invalidBody,
    Problems.invalidHeader,
    Problems.tenantMissing,
    Problems.inFlight,
    Problems.coordinatorDown,
  )
  async export(@Body() body: ExportReportDto, @Req() request: DemoRequest): Promise<ReportDto> {
    const executionId = randomUUID();
    this.stats.recordExecution(REPORT_EXPORT);
    await simulateWork(request);
    return {
      reportType: body.reportType,
      from: body.from,
      to: body.to,
      rows: reportRows(body),
      executionId,
    };
  }
}

/** Made-up but deterministic figures: one row per day of the range. */
function reportRows(body: ExportReportDto): ReportRowDto[] {
  const start = Date.parse(body.from);
  return Array.from({ length: reportDays(body.from, body.to) }, (_, day) => {
    const date = new Date(start + day * 86_400_000).toISOString().slice(0, 10);
    const seed = createHash('sha256')
      .update(`${body.reportType}|${date}|${JSON.stringify(body.filters ?? {})}`)
      .digest();
    const orders = seed.readUInt16BE(0) % 200;
    const cents = orders * (1_000 + (seed.readUInt16BE(2) % 9_000));
    return { date, orders, revenue: (cents / 100).toFixed(2) };
  });
}
