import { Injectable } from '@nestjs/common';
import { randomUUID } from 'crypto';
import { Principal } from '../common/tenant.guard';
import { CreateOrderDto } from './create-order.dto';
import { Order } from './order';
import { PaymentsGateway } from './payments.gateway';

const UNIT_PRICE = 25;

@Injectable()
export class OrdersService {
  constructor(private readonly payments: PaymentsGateway) {}

  async place(customer: Principal, dto: CreateOrderDto): Promise<Order> {
    const paymentReference = await this.payments.charge(customer.userId, dto.quantity * UNIT_PRICE);
    return new Order({ id: randomUUID(), ...dto, paymentReference });
  }
}
