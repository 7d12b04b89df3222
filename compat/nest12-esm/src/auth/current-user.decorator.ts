import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { User } from './tenant.guard.js';

/** The principal `TenantGuard` authenticated. */
export const CurrentUser = createParamDecorator(
  (_data: unknown, context: ExecutionContext): User =>
    context.switchToHttp().getRequest<{ user: User }>().user,
);
