import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { Principal } from './tenant.guard';

/** The principal `TenantGuard` left on the request. */
export const CurrentUser = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): Principal => ctx.switchToHttp().getRequest().user,
);
