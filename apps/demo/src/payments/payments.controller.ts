import { Body, Controller, Post, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { IdempotencyManager, IdempotentKey } from '@oncely/nestjs';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { isUniqueViolation } from '@oncely/typeorm';
import { DemoRoute } from '../identity/demo-route.decorator.js';
import type { DemoRequest } from '../identity/demo-principal.js';
import { ApiProblemResponses } from '../problems/api-problem-responses.decorator.js';
import { Problems } from '../problems/documented-problems.js';
import { DemoProblemType, ProblemException } from '../problems/problem.exception.js';
import { simulateWork } from '../simulation/simulate-work.js';
import { ExecutionStats } from '../stats/execution-stats.service.js';
import { CreatePaymentDto, PaymentDto } from './create-payment.dto.js';
import { Payment } from './payment.entity.js';

export const PAYMENT_SUBMIT = 'payment-submit';

@ApiTags('payments')
@Controller('payments')
export class PaymentsController {
  constructor(private readonly stats: ExecutionStats) {}

  /**
   * The server builds the key: the tenant and `paymentRequestNo` are the identity, `orderId`,
   * `amount` and `currency` the fingerprint, so a reused request number with another amount is
   * a 422. A duplicate arriving while the first runs waits for its outcome instead of a 409.
   */
  @Post()
  @DemoRoute('optional')
  @IdempotentKey({
    operation: PAYMENT_SUBMIT,
    scope: 'user.tenantId',
    target: 'body.paymentRequestNo',
    input: ['body.orderId', 'body.amount', 'body.currency'],
    idempotencyKey: 'optional',
    onBusy: 'wait',
    transactional: true,
    description: 'Submits a payment once per payment request number; another amount is a 422',
  })
  @ApiOperation({ summary: 'Submit a payment (key built from paymentRequestNo; header optional)' })
  @ApiCreatedResponse({ type: PaymentDto })
  @ApiProblemResponses(
    Problems.invalidBody,
    Problems.keyMalformed,
    Problems.invalidHeader,
    Problems.tenantMissing,
    Problems.inFlight,
    {
      status: 409,
      type: DemoProblemType.paymentRequestUsed,
      when: 'the payment request number was already paid under another idempotency key (the table’s unique constraint).',
    },
    Problems.mismatch,
    Problems.leaseLost,
  )
  async create(
    @Body() body: CreatePaymentDto,
    @Req() request: DemoRequest,
    @IdempotencyManager() manager: EntityManager,
  ): Promise<PaymentDto> {
    const executionId = randomUUID();
    this.stats.recordExecution(PAYMENT_SUBMIT);
    await simulateWork(request);
    const payment: Payment = {
      id: randomUUID(),
      tenantId: request.user!.tenantId,
      paymentRequestNo: body.paymentRequestNo,
      orderId: body.orderId,
      amount: body.amount,
      currency: body.currency,
      status: 'succeeded',
      executionId,
      createdAt: new Date().toISOString(),
    };
    try {
      await manager.insert(Payment, payment);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      throw new ProblemException({
        type: DemoProblemType.paymentRequestUsed,
        title: 'Payment request already paid',
        status: 409,
        detail: `Payment request "${body.paymentRequestNo}" was already paid under another idempotency key. Retry without a key, or with the original one, to get that payment.`,
      });
    }
    return {
      paymentId: payment.id,
      status: payment.status,
      amount: payment.amount,
      currency: payment.currency,
      executionId,
    };
  }
}
