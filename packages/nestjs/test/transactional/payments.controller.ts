import {
  Body,
  Controller,
  Inject,
  Injectable,
  InternalServerErrorException,
  Post,
  UseGuards,
} from '@nestjs/common';
import { IdempotencyManager, IdempotentKey } from '@oncely/nestjs';
import { IsInt, IsString } from 'class-validator';
import { DataSource, type EntityManager, type Repository } from 'typeorm';
import { HeaderAuthGuard } from '../fixtures/orders.controller.js';
import { Payment } from './payments.databases.js';

export const PAYMENTS = Symbol('PAYMENTS');

export class PaymentDto {
  @IsString()
  ref!: string;

  @IsInt()
  amount!: number;
}

/** Whether the fix (writing through `@IdempotencyManager()`) has been deployed. */
@Injectable()
export class Deployment {
  fixed = false;
}

/** Transactional payment routes: the usual mistakes, and the handler written right. */
@Controller('payments')
@UseGuards(HeaderAuthGuard)
export class PaymentsController {
  constructor(
    @Inject(PAYMENTS) private readonly payments: Repository<Payment>,
    private readonly dataSource: DataSource,
    private readonly deployment: Deployment,
  ) {}

  @Post('repository')
  @IdempotentKey({ operation: 'pay-repository', scope: 'user.tenantId', transactional: true })
  async viaRepository(@Body() dto: PaymentDto, @IdempotencyManager() manager: EntityManager) {
    if (this.deployment.fixed) return pay(manager, dto);
    await this.payments.save(this.payments.create(dto));
    throw new InternalServerErrorException('payment provider down');
  }

  @Post('own-transaction')
  @IdempotentKey({ operation: 'pay-own-transaction', scope: 'user.tenantId', transactional: true })
  async viaOwnTransaction(@Body() dto: PaymentDto, @IdempotencyManager() manager: EntityManager) {
    if (this.deployment.fixed) return pay(manager, dto);
    return this.dataSource.transaction((own) => pay(own, dto));
  }

  @Post('swallowing')
  @IdempotentKey({ operation: 'pay-swallowing', scope: 'user.tenantId', transactional: true })
  async swallowing(@Body() dto: PaymentDto) {
    const saved = await this.payments.save(this.payments.create(dto)).catch(() => undefined);
    return { saved: saved !== undefined };
  }

  @Post('manager')
  @IdempotentKey({ operation: 'pay-manager', scope: 'user.tenantId', transactional: true })
  viaManager(@Body() dto: PaymentDto, @IdempotencyManager() manager: EntityManager) {
    return pay(manager, dto);
  }

  @Post('read-then-pay')
  @IdempotentKey({ operation: 'pay-after-read', scope: 'user.tenantId', transactional: true })
  async readThenPay(@Body() dto: PaymentDto, @IdempotencyManager() manager: EntityManager) {
    const earlier = await this.payments.countBy({ ref: dto.ref });
    const latest = await this.payments.findOne({ where: { ref: dto.ref }, order: { id: 'DESC' } });
    return { earlier, latestAmount: latest?.amount, ...(await pay(manager, dto)) };
  }
}

async function pay(manager: EntityManager, dto: PaymentDto) {
  const payments = manager.getRepository(Payment);
  const { id, ref } = await payments.save(payments.create(dto));
  return { id, ref };
}
