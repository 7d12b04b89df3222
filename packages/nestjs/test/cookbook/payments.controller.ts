import {
  Body,
  ConflictException,
  Controller,
  Injectable,
  Post,
  Req,
  Res,
  ServiceUnavailableException,
} from '@nestjs/common';
import { IdempotentKey } from '@oncely/nestjs';
import { IsIn, IsString, Matches } from 'class-validator';
import { randomUUID } from 'node:crypto';
import type { Principal } from './support/cookbook-app.js';
import type { Gate } from './support/gate.js';

export class SubmitPaymentDto {
  @IsString() paymentRequestNo!: string;
  // One per try of the payer: a new card after a decline is a new attempt.
  @IsString() attemptId!: string;
  @IsString() orderId!: string;
  // Money as a decimal string, never a float: "100.00" and "100.0" stay different inputs.
  @Matches(/^\d{1,10}\.\d{2}$/) amount!: string;
  @IsIn(['EUR', 'USD', 'CNY']) currency!: string;
  @IsString() paymentMethod!: string;
}

export type PaymentOutcome =
  | { readonly status: 'captured'; readonly paymentId: string; readonly amount: string }
  | { readonly status: 'declined'; readonly reason: string };

/**
 * Stands in for the payment provider (called with the attempt id as its own idempotency key) and
 * the payments table, whose `UNIQUE (tenant_id, payment_request_no)` on captured payments stops a
 * request number from being paid twice, whatever attempts it took.
 */
@Injectable()
export class PaymentProvider {
  readonly charges: SubmitPaymentDto[] = [];
  gate: Gate | undefined;
  down = false;
  readonly #captured = new Set<string>();

  async charge(tenantId: string, dto: SubmitPaymentDto): Promise<PaymentOutcome> {
    await this.gate?.pass();
    if (this.down) throw new ServiceUnavailableException('The payment provider timed out.');
    const request = `${tenantId}/${dto.paymentRequestNo}`;
    if (this.#captured.has(request)) {
      throw new ConflictException(`Payment request ${dto.paymentRequestNo} is already paid.`);
    }
    this.charges.push(dto);
    if (dto.paymentMethod === 'card-declined')
      return { status: 'declined', reason: 'do-not-honor' };
    this.#captured.add(request);
    return { status: 'captured', paymentId: randomUUID(), amount: dto.amount };
  }
}

@Controller('payments')
export class PaymentsController {
  constructor(private readonly provider: PaymentProvider) {}

  @Post()
  @IdempotentKey({
    operation: 'payment-submit',
    scope: 'user.tenantId',
    target: ['body.paymentRequestNo', 'body.attemptId'],
    input: ['body.orderId', 'body.amount', 'body.currency', 'body.paymentMethod'],
    idempotencyKey: 'ignored',
    onBusy: 'wait',
    wait: 20_000,
    retention: 7 * 24 * 60 * 60 * 1000,
  })
  async submit(
    @Body() dto: SubmitPaymentDto,
    @Req() req: { user: Principal },
    @Res({ passthrough: true }) res: { status(code: number): unknown },
  ): Promise<PaymentOutcome> {
    const outcome = await this.provider.charge(req.user.tenantId, dto);
    // Returned, not thrown: a decline is this attempt's final answer, kept and replayed.
    if (outcome.status === 'declined') res.status(402);
    return outcome;
  }
}
