import { Body, Controller, HttpCode, Injectable, Post } from '@nestjs/common';
import { SingleFlight } from '@oncely/nestjs';
import { IsArray, IsIn, IsISO8601, IsOptional, IsString } from 'class-validator';
import { randomUUID } from 'node:crypto';
import type { Gate } from './support/gate.js';

export class ExportReportDto {
  @IsIn(['sales', 'refunds']) reportType!: string;
  // The business period the report covers, not the time it was asked for.
  @IsISO8601({ strict: true }) from!: string;
  @IsISO8601({ strict: true }) to!: string;
  @IsOptional() @IsArray() @IsString({ each: true }) regions?: string[];
  @IsIn(['csv', 'xlsx']) format!: string;
}

export interface ReportFile {
  readonly reportType: string;
  readonly fileId: string;
}

/** Stands in for the report builder: seconds of database scans per export. */
@Injectable()
export class ReportBuilder {
  readonly builds: ExportReportDto[] = [];
  gate: Gate | undefined;

  async build(dto: ExportReportDto): Promise<ReportFile> {
    this.builds.push(dto);
    await this.gate?.pass();
    return { reportType: dto.reportType, fileId: randomUUID() };
  }
}

@Controller('reports')
export class ReportsController {
  constructor(private readonly builder: ReportBuilder) {}

  @Post('export')
  @HttpCode(200)
  @SingleFlight({
    operation: 'report-export',
    // The report template's version: a new layout must not be served from older exports.
    version: 'v3',
    scope: 'user.tenantId',
    target: 'body.reportType',
    input: ['body.from', 'body.to', 'body.regions', 'body.format'],
    unordered: ['body.regions'],
    resultTtl: 10 * 60 * 1000,
  })
  export(@Body() dto: ExportReportDto): Promise<ReportFile> {
    return this.builder.build(dto);
  }
}
