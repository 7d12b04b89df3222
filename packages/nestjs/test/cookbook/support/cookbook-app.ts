import {
  Injectable,
  ValidationPipe,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
  type ModuleMetadata,
  type Type,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { OncelyEvent, OncelyOutcome } from '@oncely/core';
import { OncelyModule, type OncelyModuleOptions } from '@oncely/nestjs';
import request from 'supertest';

/** What the app's auth guard leaves on `request.user`: the scope every HTTP example reads. */
export interface Principal {
  readonly tenantId: string;
  readonly userId?: string;
}

/**
 * Stands in for the app's auth guard (a real one verifies a token): the principal comes from
 * `x-tenant-id` and `x-user-id`. What a request lacks stays absent, so that a key reading it
 * refuses the request (`400 missing-key-field`) instead of merging it with others.
 */
@Injectable()
export class HeaderPrincipalGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const req = context.switchToHttp().getRequest<{
      headers: Record<string, string | string[] | undefined>;
      user?: Principal;
    }>();
    const tenantId = req.headers['x-tenant-id'];
    const userId = req.headers['x-user-id'];
    if (typeof tenantId === 'string') {
      req.user = { tenantId, ...(typeof userId === 'string' && { userId }) };
    }
    return true;
  }
}

/** Who sends a request: the headers the stand-in guard turns into a principal. */
export interface Caller {
  readonly tenant?: string;
  readonly user?: string;
}

export const ACME: Caller = { tenant: 'acme', user: 'u-1' };

/** One scenario's Nest app (Express adapter), with every decision oncely reported. */
export class CookbookApp {
  constructor(
    readonly app: INestApplication,
    readonly events: readonly OncelyEvent[],
  ) {}

  get<T>(type: Type<T>): T {
    return this.app.get(type);
  }

  post(path: string, body: object, caller: Caller = ACME): request.Test {
    return withCaller(request(this.app.getHttpServer()).post(path).send(body), caller);
  }

  fetch(path: string, caller: Caller = ACME): request.Test {
    return withCaller(request(this.app.getHttpServer()).get(path), caller);
  }

  /** The keys of `operation` (`namespace:operation:version`) decided with `outcome`. */
  keys(operation: string, outcome: OncelyOutcome): string[] {
    return this.events
      .filter((event) => event.operation === operation && event.outcome === outcome)
      .map((event) => event.key);
  }

  close(): Promise<void> {
    return this.app.close();
  }
}

function withCaller(test: request.Test, { tenant, user }: Caller): request.Test {
  if (tenant !== undefined) test.set('x-tenant-id', tenant);
  if (user !== undefined) test.set('x-user-id', user);
  return test;
}

export interface CookbookAppSetup extends Pick<ModuleMetadata, 'controllers' | 'providers'> {
  /** Module options besides the defaults here (`namespace: 'shop'`, in-memory engines). */
  readonly oncely?: Partial<OncelyModuleOptions>;
  /** Runs before `init()`: where a scenario connects a microservice. */
  readonly beforeInit?: (app: INestApplication) => Promise<void>;
}

/**
 * Boots a scenario the way an app boots: `OncelyModule.forRoot` (one process: the in-memory
 * defaults, unless the scenario hands it engines), a global `ValidationPipe`, the auth guard.
 */
export async function startCookbookApp(setup: CookbookAppSetup): Promise<CookbookApp> {
  const events: OncelyEvent[] = [];
  const moduleRef = await Test.createTestingModule({
    imports: [
      OncelyModule.forRoot({
        namespace: 'shop',
        ...setup.oncely,
        events: (event) => events.push(event),
      }),
    ],
    controllers: setup.controllers ?? [],
    providers: [...(setup.providers ?? []), { provide: APP_GUARD, useClass: HeaderPrincipalGuard }],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, transform: true }));
  await setup.beforeInit?.(app);
  await app.init();
  return new CookbookApp(app, events);
}
