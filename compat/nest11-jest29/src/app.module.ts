import {
  Body,
  Controller,
  Injectable,
  Module,
  Post,
  UnauthorizedException,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { IdempotentKey, OncelyModule } from '@oncely/nestjs';
import { IsInt, IsString, Min } from 'class-validator';
import { randomUUID } from 'node:crypto';

class CreateOrderDto {
  @IsString() cartId!: string;
  @IsInt() @Min(1) qty!: number;
}

/**
 * Stands in for your auth guard (e.g. Passport's `AuthGuard('jwt')`): it leaves the principal on
 * `request.user`, which the key's `scope` reads. Guards run before oncely's interceptor.
 */
@Injectable()
class TenantGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{
      headers: Record<string, string | string[] | undefined>;
      user?: { tenantId: string };
    }>();
    const tenantId = request.headers['x-tenant-id'];
    if (typeof tenantId !== 'string') throw new UnauthorizedException('x-tenant-id missing');
    request.user = { tenantId }; // a real guard takes it from a verified token
    return true;
  }
}

@Controller('orders')
@UseGuards(TenantGuard)
class OrdersController {
  @Post()
  @IdempotentKey({ operation: 'order-create', scope: 'user.tenantId' })
  create(@Body() dto: CreateOrderDto) {
    return { orderId: randomUUID(), ...dto };
  }
}

@Module({
  // One process: in-memory defaults. Several nodes: add a coordinator (Redis) and a store (TypeORM).
  imports: [OncelyModule.forRoot({ namespace: 'shop', service: 'shop-api' })],
  controllers: [OrdersController],
})
export class AppModule {}
