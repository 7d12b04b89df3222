import { Body, Controller, Get, Post, Query, UseGuards } from '@nestjs/common';
import { IdempotentKey, SingleFlight } from '@oncely/nestjs';
import { randomUUID } from 'node:crypto';
import { HeaderAuthGuard } from '../fixtures/orders.controller.js';
import { Executions } from '../fixtures/test-app.js';

/** One route per kind of protection, for counting what a request costs at the boundary. */
@Controller()
@UseGuards(HeaderAuthGuard)
export class CoreCallsController {
  constructor(private readonly executions: Executions) {}

  @Post('payments')
  @IdempotentKey({ operation: 'payment', scope: 'user.tenantId' })
  pay(@Body() body: { amount: string }) {
    return { id: randomUUID(), amount: body.amount, run: this.executions.hit('payment') };
  }

  @Get('quotes')
  @SingleFlight({ operation: 'quote', scope: 'user.tenantId', target: 'query.sku' })
  quote(@Query('sku') sku: string) {
    return { id: randomUUID(), sku, run: this.executions.hit('quote') };
  }
}
