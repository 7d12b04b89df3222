import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';

/** The principal an auth guard leaves on `request.user`; oncely's key scope reads it. */
export interface Principal {
  userId: string;
  tenantId?: string;
}

/**
 * Stands in for an auth guard (Passport's `AuthGuard('jwt')`, …): a real one takes the
 * principal from a verified token. A user without a tenant still passes, so a route scoped to
 * `user.tenantId` answers it with oncely's `400 missing-key-field`.
 */
@Injectable()
export class TenantGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest();
    const userId = request.headers['x-user-id'];
    if (typeof userId !== 'string') throw new UnauthorizedException('x-user-id missing');
    const user: Principal = { userId, tenantId: request.headers['x-tenant-id'] };
    request.user = user;
    return true;
  }
}
