import {
  Inject,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Observable } from 'rxjs';
import { interceptProtectedCall, type CallTransport } from './call/protected-call.interception.js';
import { ProtectedHandlerDiscovery } from './discovery/protected-handler.discovery.js';
import { graphqlCallTransport } from './graphql/graphql-call.transport.js';
import { HttpRouteInterception } from './http/http-route.interception.js';
import { ONCELY_RUNTIME } from './oncely.constants.js';
import type { OncelyRuntime } from './oncely.runtime.js';
import { settleRmqMessage } from './rpc/rmq-message.settlement.js';
import { rpcCallTransport } from './rpc/rpc-call.transport.js';

/**
 * The one global interceptor of oncely: it looks up the handler of each call among those found
 * at start-up and hands a protected one to its kind's interception (`http/`, or `call/` with the
 * `rpc/` or `graphql/` transport). Everything else passes straight through. Provider methods do
 * not come here: they are wrapped on their instances at start-up (`method/`).
 */
@Injectable()
export class OncelyInterceptor implements NestInterceptor {
  private readonly http: HttpRouteInterception;
  private readonly calls: Readonly<Record<'rpc' | 'graphql', CallTransport>>;

  constructor(
    @Inject(ONCELY_RUNTIME) private readonly runtime: OncelyRuntime,
    private readonly handlers: ProtectedHandlerDiscovery,
    adapterHost: HttpAdapterHost,
  ) {
    this.http = new HttpRouteInterception(runtime, () => adapterHost.httpAdapter);
    this.calls = {
      rpc: runtime.settlesRmqMessages
        ? { ...rpcCallTransport, settle: settleRmqMessage }
        : rpcCallTransport,
      graphql: graphqlCallTransport,
    };
  }

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const type = context.getType<string>();
    if (type === 'http') {
      const entry = this.handlers.httpRoute(context.getHandler());
      if (!entry) return next.handle();
      return entry.keyAfterInterceptors
        ? this.http.deferToHandler(entry, context, next)
        : this.http.intercept(entry, context, next);
    }
    if (type !== 'rpc' && type !== 'graphql') return next.handle();
    const route = this.handlers.callRoute(type, context.getHandler());
    if (!route) return next.handle();
    return interceptProtectedCall(this.runtime.executor, route, this.calls[type], context, next);
  }
}
