import {
  Body,
  ClassSerializerInterceptor,
  Controller,
  Get,
  Module,
  Param,
  Post,
  Res,
  type INestApplication,
} from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import {
  IdempotentKey,
  OncelyModule,
  SingleFlight,
  type OncelyModuleOptions,
} from '@oncely/nestjs';
import { IsInt, IsString } from 'class-validator';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { TimeoutInterceptor, UserView } from '../conformance/app-layers.js';
import { Executions, startOn, type Platform } from '../fixtures/test-app.js';

export class CreateUserDto {
  @IsString() name!: string;
}

export class ChargeDto {
  @IsInt() amount!: number;
}

export const SECRET = 'argon2id$do-not-store';

interface StatusResponse {
  status(code: number): unknown;
}

@Controller('docs-style')
export class DocsStyleController {
  constructor(private readonly executions: Executions) {}

  @Post('users')
  @IdempotentKey({ operation: 'user-create', scope: 'headers.x-tenant' })
  createUser(@Body() dto: CreateUserDto): UserView {
    this.executions.hit('user-create');
    return new UserView({ id: randomUUID(), name: dto.name, passwordHash: SECRET });
  }

  @Get('users/:id')
  @SingleFlight({
    operation: 'user-read',
    scope: 'headers.x-tenant',
    target: 'params.id',
    input: [],
  })
  readUser(@Param('id') id: string): UserView {
    this.executions.hit(`user-read:${id}`);
    return new UserView({ id, name: 'Ada', passwordHash: SECRET });
  }

  /** Answers with the status in the body through the platform's own response object. */
  @Post('charges/:status')
  @IdempotentKey({ operation: 'charge-status', scope: 'headers.x-tenant', target: 'params.status' })
  charge(
    @Param('status') status: string,
    @Body() dto: ChargeDto,
    @Res({ passthrough: true }) res: StatusResponse,
  ): object {
    this.executions.hit(`charge-status:${status}`);
    res.status(Number(status));
    return { amount: dto.amount, execution: randomUUID() };
  }

  @Get('lookups/:status/:id')
  @SingleFlight({
    operation: 'lookup-status',
    scope: 'headers.x-tenant',
    target: 'params.id',
    input: [],
  })
  lookup(
    @Param('status') status: string,
    @Param('id') id: string,
    @Res({ passthrough: true }) res: StatusResponse,
  ): object {
    this.executions.hit(`lookup-status:${id}`);
    res.status(Number(status));
    return { id, execution: randomUUID() };
  }

  /** Slower than the app's timeout interceptor. */
  @Post('slow-charges')
  @IdempotentKey({ operation: 'slow-charge', scope: 'headers.x-tenant' })
  async slowCharge(@Body() dto: ChargeDto): Promise<UserView> {
    this.executions.hit('slow-charge');
    await sleep(1500);
    return new UserView({ id: randomUUID(), name: `charge-${dto.amount}`, passwordHash: SECRET });
  }
}

/** Where the app registers the serializer: its root module, or a module imported before oncely. */
export type SerializerPlacement = 'root' | 'imported-first';

@Module({ providers: [{ provide: APP_INTERCEPTOR, useClass: ClassSerializerInterceptor }] })
class SerializerModule {}

/**
 * An app wired the way the NestJS docs show: global `ClassSerializerInterceptor` and the docs'
 * timeout interceptor as `APP_INTERCEPTOR`s, oncely imported like any other module.
 */
export async function createDocsStyleApp(
  platform: Platform,
  options: OncelyModuleOptions,
  placement: SerializerPlacement,
): Promise<INestApplication> {
  const serializer = { provide: APP_INTERCEPTOR, useClass: ClassSerializerInterceptor };
  const moduleRef = await Test.createTestingModule({
    imports:
      placement === 'imported-first'
        ? [SerializerModule, OncelyModule.forRoot(options)]
        : [OncelyModule.forRoot(options)],
    controllers: [DocsStyleController],
    providers: [
      Executions,
      ...(placement === 'root' ? [serializer] : []),
      { provide: APP_INTERCEPTOR, useClass: TimeoutInterceptor },
    ],
  }).compile();
  return startOn(platform, moduleRef);
}
