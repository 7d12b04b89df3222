import { Body, Controller, Post, Res, StreamableFile, UseGuards } from '@nestjs/common';
import { IdempotentKey } from '@oncely/nestjs';
import { CurrentUser } from '../common/current-user.decorator';
import { Principal, TenantGuard } from '../common/tenant.guard';
import { CreateOrderDto } from './create-order.dto';
import { Order } from './order';
import { OrdersService } from './orders.service';

/** What the handler needs of the response: Express's `res` and Fastify's `reply` both have it. */
interface HeaderResponse {
  header(name: string, value: string): unknown;
}

@Controller('orders')
@UseGuards(TenantGuard)
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  /**
   * Clients send `Idempotency-Key`; a retry with the same key and body replays the kept `201`
   * (with its `Location`), so the card is charged once. Keys are scoped to the caller's tenant.
   */
  @Post()
  @IdempotentKey({ operation: 'order-create', scope: 'user.tenantId' })
  async create(
    @Body() dto: CreateOrderDto,
    @CurrentUser() user: Principal,
    @Res({ passthrough: true }) res: HeaderResponse,
  ): Promise<Order> {
    const order = await this.orders.place(user, dto);
    res.header('location', `/orders/${order.id}`);
    return order;
  }

  /**
   * A careless handler: it charges, then answers with a file, which oncely cannot keep. Only its
   * run tells (the declared type is a `Promise`), so the refusal is what the key keeps, and a
   * retry gets it instead of charging again.
   */
  @Post('receipts')
  @IdempotentKey({ operation: 'receipt-create', scope: 'user.tenantId' })
  async receipt(
    @Body() dto: CreateOrderDto,
    @CurrentUser() user: Principal,
  ): Promise<StreamableFile> {
    const order = await this.orders.place(user, dto);
    return new StreamableFile(Buffer.from(`receipt of ${order.id}`));
  }
}
