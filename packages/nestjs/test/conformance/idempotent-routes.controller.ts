import {
  BadRequestException,
  Body,
  Controller,
  Header,
  HttpCode,
  InternalServerErrorException,
  Param,
  Post,
  Req,
  Res,
  ServiceUnavailableException,
} from '@nestjs/common';
import { ConformanceProbe, CONFORMANCE_SECRET } from '@oncely/core/testing';
import { IdempotentKey } from '@oncely/nestjs';
import { randomBytes, randomUUID } from 'node:crypto';
import { UserView } from './app-layers.js';
import { CreateOrderDto, CreateUserDto, OrderLineDto, PayDto } from './dtos.js';

const scope = 'user.tenantId';

/** Express `res` or Fastify `reply`, as `@Res({ passthrough: true })` hands it over. */
interface PlatformResponse {
  status?(code: number): unknown;
  code?(code: number): unknown;
  header(name: string, value: string): unknown;
  getHeader(name: string): unknown;
}

/** Sets the status the platform's own way: Fastify `reply.code()`, Express `res.status()`. */
function setStatus(response: PlatformResponse, code: number): void {
  if (typeof response.code === 'function') response.code(code);
  else response.status?.(code);
}

/** The fixture contract's idempotent routes (see `HttpConformanceHarness`). */
@Controller()
export class IdempotentRoutesController {
  constructor(private readonly probe: ConformanceProbe) {}

  @Post('orders')
  @IdempotentKey({ operation: 'order-create', scope })
  @Header('Location', '/orders/latest')
  create(@Body() dto: CreateOrderDto) {
    const execution = this.probe.hit('order-create');
    return {
      id: randomUUID(),
      execution,
      customer: dto.customer,
      lines: dto.lines.length,
      // Nest only (the adapter spec checks it): the handler gets the validated DTO instances.
      dtoInstance: dto instanceof CreateOrderDto && dto.lines[0] instanceof OrderLineDto,
    };
  }

  @Post('orders/slow')
  @IdempotentKey({ operation: 'order-slow', scope })
  async slow(@Body() dto: CreateOrderDto) {
    const execution = this.probe.hit('order-slow');
    await this.probe.pass(`slow:${dto.customer}`);
    return { id: randomUUID(), execution };
  }

  @Post('orders/slow-wait')
  @IdempotentKey({ operation: 'order-slow-wait', scope, onBusy: 'wait', wait: 30_000 })
  async slowWait(@Body() dto: CreateOrderDto) {
    const execution = this.probe.hit('order-slow-wait');
    await this.probe.pass(`slow-wait:${dto.customer}`);
    return { id: randomUUID(), execution };
  }

  @Post('orders/payments')
  @HttpCode(200)
  @IdempotentKey({
    operation: 'payment',
    scope,
    idempotencyKey: 'ignored',
    target: 'body.customer',
    missingUserStatus: 401,
  })
  pay(@Body() dto: CreateOrderDto) {
    return { paid: this.probe.hit('payment'), customer: dto.customer };
  }

  @Post('statuses/:code')
  @IdempotentKey({ operation: 'status', scope, target: 'params.code' })
  status(@Param('code') code: string, @Res({ passthrough: true }) response: PlatformResponse) {
    const execution = this.probe.hit(`status:${code}`);
    setStatus(response, Number(code));
    return { execution };
  }

  @Post('flaky')
  @IdempotentKey({ operation: 'flaky', scope })
  flaky() {
    const execution = this.probe.hit('flaky');
    if (execution === 1) throw new InternalServerErrorException('first attempt fails');
    return { execution };
  }

  @Post('rejected')
  @IdempotentKey({ operation: 'rejected', scope })
  rejected() {
    throw new BadRequestException({
      message: 'out of stock',
      execution: this.probe.hit('rejected'),
    });
  }

  @Post('big')
  @IdempotentKey({ operation: 'big', scope, maxResponseBytes: 64 })
  big() {
    this.probe.hit('big');
    return { padding: 'x'.repeat(200) };
  }

  @Post('refunds/v1')
  @IdempotentKey({ operation: 'refund', scope, shared: true })
  refundV1() {
    return { refund: this.probe.hit('refund'), version: 1 };
  }

  @Post('refunds/v2')
  @HttpCode(200)
  @IdempotentKey({ operation: 'refund', scope, shared: true })
  refundV2() {
    return { refund: this.probe.hit('refund'), version: 2 };
  }

  @Post('bytes')
  @Header('Content-Type', 'application/octet-stream')
  @IdempotentKey({ operation: 'bytes', scope })
  bytes() {
    this.probe.hit('bytes');
    return randomBytes(4096);
  }

  @Post('headers')
  @IdempotentKey({ operation: 'headers', scope, replayHeaders: ['x-order-version'] })
  headers(@Res({ passthrough: true }) response: PlatformResponse) {
    response.header('ETag', '"v1"');
    response.header('Set-Cookie', `session=${randomUUID()}`);
    response.header('X-Order-Version', '7');
    response.header('X-Debug', 'per-response');
    // Added to the Vary a layer (CORS) set, as Express's `res.vary` does.
    const vary = response.getHeader('vary') as string | undefined;
    response.header('Vary', vary ? `${vary}, Accept-Language` : 'Accept-Language');
    return { execution: this.probe.hit('headers') };
  }

  @Post('users')
  @IdempotentKey({ operation: 'user-create', scope })
  createUser(@Body() dto: CreateUserDto): UserView {
    this.probe.hit('user-create');
    return new UserView({ id: randomUUID(), name: dto.name, passwordHash: CONFORMANCE_SECRET });
  }

  @Post('slow-users')
  @IdempotentKey({ operation: 'slow-user', scope })
  async slowUser(@Body() dto: CreateUserDto): Promise<UserView> {
    this.probe.hit('slow-user');
    await this.probe.pass(`slow-user:${dto.name}`);
    return new UserView({ id: randomUUID(), name: dto.name, passwordHash: CONFORMANCE_SECRET });
  }

  @Post('hung')
  @IdempotentKey({ operation: 'hung', scope, maxDuration: 1000, onBusy: 'wait', wait: 10_000 })
  async hung() {
    const execution = this.probe.hit('hung');
    await this.probe.pass(`hung:${execution}`);
    return { execution };
  }

  @Post('held-wait')
  @IdempotentKey({ operation: 'held-wait', scope, onBusy: 'wait', wait: 1000 })
  async heldWait() {
    const execution = this.probe.hit('held-wait');
    await this.probe.pass(`held-wait:${execution}`);
    return { execution };
  }

  @Post('transient')
  @IdempotentKey({ operation: 'transient', scope, onBusy: 'wait', wait: 10_000 })
  async transient() {
    const execution = this.probe.hit('transient');
    if (execution === 1) {
      await this.probe.pass('transient:1');
      throw new ServiceUnavailableException({ message: 'provider down', execution });
    }
    return { id: randomUUID(), execution };
  }

  @Post('outages/:failures')
  @IdempotentKey({ operation: 'outage-wait', scope, onBusy: 'wait', wait: 10_000 })
  async outage(@Param('failures') failures: string) {
    const execution = this.probe.hit('outage-wait');
    await this.probe.pass('outage-wait');
    if (execution <= Number(failures)) {
      throw new ServiceUnavailableException({ message: 'upstream unavailable', execution });
    }
    return { execution };
  }

  @Post('pay')
  @IdempotentKey({ operation: 'pay', scope, target: 'body.orderId', missingUserStatus: 401 })
  payOrder(@Body() dto: PayDto, @Req() request: { user: { tenantId: unknown } }) {
    const executions = this.probe.hit('pay');
    return { tenant: request.user.tenantId, orderId: dto.orderId, amount: dto.amount, executions };
  }

  /** No DTO: the whole parsed body, hostile as it is, goes into the fingerprint. */
  @Post('echo')
  @IdempotentKey({ operation: 'echo', scope, missingUserStatus: 401 })
  echo(@Req() request: { user: { tenantId: unknown } }) {
    return { tenant: request.user.tenantId, executions: this.probe.hit('echo') };
  }
}
