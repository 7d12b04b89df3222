import {
  Body,
  Controller,
  createParamDecorator,
  Injectable,
  Post,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { IdempotentKey } from '@oncely/nestjs';
import { IsString, Matches } from 'class-validator';

/** Authenticates by the `x-tenant` header, as an auth guard would, whatever it contains. */
@Injectable()
export class TenantHeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context
      .switchToHttp()
      .getRequest<{ headers: Record<string, string | undefined>; user?: unknown }>();
    const tenantId = request.headers['x-tenant'];
    if (tenantId !== undefined) request.user = { tenantId };
    return true;
  }
}

export class PayDto {
  @IsString()
  @Matches(/^[A-Za-z0-9-]{1,64}$/)
  orderId!: string;

  @IsString()
  @Matches(/^\d{1,9}\.\d{2}$/)
  amount!: string;
}

/** Counts handler executions: what "nothing executed" is checked against. */
@Injectable()
export class PayExecutions {
  count = 0;
}

interface TenantRequestUser {
  readonly tenantId: string;
}

const TenantUser = createParamDecorator(
  (_data: unknown, context: ExecutionContext) =>
    context.switchToHttp().getRequest<{ user: TenantRequestUser }>().user,
);

@Controller()
@UseGuards(TenantHeaderGuard)
export class HostilePayController {
  constructor(private readonly executions: PayExecutions) {}

  @Post('pay')
  @IdempotentKey({
    operation: 'pay',
    scope: 'user.tenantId',
    target: 'body.orderId',
    missingUserStatus: 401,
  })
  pay(@Body() dto: PayDto, @TenantUser() user: TenantRequestUser) {
    this.executions.count += 1;
    return {
      tenant: user.tenantId,
      orderId: dto.orderId,
      amount: dto.amount,
      executions: this.executions.count,
    };
  }

  /** No DTO: the whole parsed body, hostile as it is, goes into the fingerprint. */
  @Post('echo')
  @IdempotentKey({ operation: 'echo', scope: 'user.tenantId', missingUserStatus: 401 })
  echo(@TenantUser() user: TenantRequestUser) {
    this.executions.count += 1;
    return { tenant: user.tenantId, executions: this.executions.count };
  }
}
