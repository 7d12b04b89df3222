import { Controller, Get, HttpStatus, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { DEMO_CONFIG } from '../config/demo-config.token.js';
import type { DemoConfig } from '../config/demo-config.js';
import { ProblemException } from '../problems/problem.exception.js';
import { DemoRedis } from './demo-redis.js';

export class HealthDto {
  @ApiProperty({ example: 'ok' })
  status!: 'ok';

  @ApiProperty({ enum: ['sqlite', 'postgres', 'mysql'] })
  database!: string;

  @ApiProperty({ enum: ['redis', 'in-memory'] })
  coordinator!: string;
}

@ApiTags('observability')
@Controller('health')
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly redis: DemoRedis,
    @Inject(DEMO_CONFIG) private readonly config: DemoConfig,
  ) {}

  /** 200 once the database answers (migrations have run) and, with Redis, Redis answers too. */
  @Get()
  @ApiOkResponse({ type: HealthDto })
  @ApiResponse({ status: 503, description: 'A store is not reachable (problem+json).' })
  async check(): Promise<HealthDto> {
    const failures: string[] = [];
    await this.dataSource.query('SELECT 1').catch(() => failures.push('database'));
    if (this.redis.client) await this.redis.client.ping().catch(() => failures.push('redis'));
    if (failures.length > 0) {
      throw new ProblemException({
        type: 'urn:oncely-demo:problem:unhealthy',
        title: 'Service unavailable',
        status: HttpStatus.SERVICE_UNAVAILABLE,
        detail: `Not reachable: ${failures.join(', ')}.`,
      });
    }
    return {
      status: 'ok',
      database: this.config.database.kind,
      coordinator: this.redis.client ? 'redis' : 'in-memory',
    };
  }
}
