import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiTags } from '@nestjs/swagger';
import { ExecutionStats } from './execution-stats.service.js';

export class StatsDto {
  @ApiProperty({ description: 'Process id of this demo instance.' })
  pid!: number;

  @ApiProperty({
    description: 'Handler executions per operation, counted in this process since it started.',
    example: { 'order-create': 1, 'report-export': 1 },
    additionalProperties: { type: 'integer' },
  })
  executions!: Record<string, number>;
}

@ApiTags('observability')
@Controller('stats')
export class StatsController {
  constructor(private readonly stats: ExecutionStats) {}

  @Get()
  @ApiOkResponse({ type: StatsDto })
  read(): StatsDto {
    return { pid: process.pid, executions: this.stats.snapshot() };
  }
}
