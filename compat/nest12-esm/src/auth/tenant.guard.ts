import {
  Injectable,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import type { Request } from 'express';

/** The principal this app's routes see on `request.user`. */
export interface User {
  readonly id: string;
  /** Absent for users of no tenant (platform operators): tenant-scoped routes refuse them. */
  readonly tenantId?: string;
}

/**
 * Stands in for a real auth guard (Passport's `AuthGuard('jwt')`, say): it leaves the principal
 * on `request.user`, where oncely's `scope: 'user.tenantId'` reads it. Guards run before oncely's
 * interceptor, so an unauthenticated request never reaches the idempotency record.
 */
@Injectable()
export class TenantGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request & { user?: User }>();
    const id = request.header('x-user-id');
    if (!id) throw new UnauthorizedException('x-user-id missing');
    const tenantId = request.header('x-tenant-id');
    request.user = tenantId ? { id, tenantId } : { id };
    return true;
  }
}
