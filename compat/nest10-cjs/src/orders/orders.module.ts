import { Module } from '@nestjs/common';
import { OrdersController } from './orders.controller';
import { OrdersService } from './orders.service';
import { PaymentsGateway } from './payments.gateway';

@Module({
  controllers: [OrdersController],
  providers: [OrdersService, PaymentsGateway],
})
export class OrdersModule {}
