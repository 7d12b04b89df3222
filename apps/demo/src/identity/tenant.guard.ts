import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { DemoProblemType, ProblemException } from '../problems/problem.exception.js';
import type { DemoPrincipal, DemoRequest } from './demo-principal.js';

const IDENTIFIER = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Stands in for authentication: `X-Tenant-Id` (required) and `X-User-Id` (optional) become
 * `request.user`, which keys read as `user.tenantId`. Guards run before interceptors, so a
 * request without a tenant is refused before oncely builds a key or takes a lock.
 */
@Injectable()
export class TenantGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<DemoRequest>();
    const tenantId = request.headers['x-tenant-id'];
    const userId = request.headers['x-user-id'];
    if (typeof tenantId !== 'string' || !IDENTIFIER.test(tenantId)) {
      throw new ProblemException({
        type: DemoProblemType.tenantMissing,
        title: 'Tenant required',
        status: 401,
        detail:
          'Send the X-Tenant-Id header: 1 to 64 letters, digits, ".", "_" or "-". Every key is scoped by it.',
      });
    }
    if (userId !== undefined && (typeof userId !== 'string' || !IDENTIFIER.test(userId))) {
      throw new ProblemException({
        type: DemoProblemType.invalidHeader,
        title: 'Invalid header',
        status: 400,
        detail: 'X-User-Id, when sent, must be 1 to 64 letters, digits, ".", "_" or "-".',
        header: 'x-user-id',
      });
    }
    const principal: DemoPrincipal = { tenantId, ...(userId !== undefined && { userId }) };
    request.user = principal;
    return true;
  }
}
