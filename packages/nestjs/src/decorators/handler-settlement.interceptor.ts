import {
  Injectable,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants.js';
import { from, lastValueFrom, type Observable } from 'rxjs';

// `Symbol.for`: decorators imported from one build of this package (CommonJS or ESM) report to
// the interceptor of `OncelyModule` imported from the other.
const SETTLEMENT = Symbol.for('@oncely/nestjs:handler-settlement');
const DEFERRED = Symbol.for('@oncely/nestjs:deferred-protection');
const SETTLEMENT_INTERCEPTOR = Symbol.for('@oncely/nestjs:handler-settlement-interceptor');

/** The protection of a call whose keys wait for the route's own interceptors, run from here. */
export type DeferredProtection = (
  context: ExecutionContext,
  next: CallHandler,
) => Promise<Observable<unknown>>;

/**
 * Leaves a route's protection on the request for `HandlerSettlementInterceptor` to run once the
 * route's own interceptors (multer's) have produced the body the keys are built from.
 */
export function deferProtection(request: object, protect: DeferredProtection): void {
  (request as Record<symbol, unknown>)[DEFERRED] = protect;
}

/** How the route handler itself ended, whatever the interceptors around it made of it. */
export type HandlerOutcome =
  | { readonly kind: 'value'; readonly value: unknown }
  | { readonly kind: 'error'; readonly error: unknown };

/**
 * The handler's own outcome, reported by `HandlerSettlementInterceptor` from right next to the
 * handler. Outer interceptors may turn a slow handler into an error (a timeout) or drop it; the
 * key must stay held until the handler itself settles, so the global interceptor waits on this.
 */
export class HandlerSettlement {
  /** Whether the route reached the handler (an inner interceptor may answer without it). */
  entered = false;
  outcome: HandlerOutcome | undefined;
  readonly settled: Promise<HandlerOutcome>;
  #resolve!: (outcome: HandlerOutcome) => void;

  constructor() {
    this.settled = new Promise((resolve) => (this.#resolve = resolve));
  }

  /** Opens the slot on the request, for the handler of this request to report into. */
  static open(request: object): HandlerSettlement {
    const settlement = new HandlerSettlement();
    (request as Record<symbol, unknown>)[SETTLEMENT] = settlement;
    return settlement;
  }

  report(outcome: HandlerOutcome): void {
    if (this.outcome !== undefined) return;
    this.outcome = outcome;
    this.#resolve(outcome);
  }
}

/**
 * Applied by `@IdempotentKey`/`@SingleFlight` as the innermost interceptor of the route. It
 * subscribes to the handler once, on its own, so an outer operator that unsubscribes (rxjs
 * `timeout`) cannot hide how the handler ended. On a route whose keys wait for its interceptors,
 * it is where the protection runs. Inert on requests oncely does not protect.
 */
@Injectable()
export class HandlerSettlementInterceptor implements NestInterceptor {
  static readonly [SETTLEMENT_INTERCEPTOR] = true;

  intercept(
    context: ExecutionContext,
    next: CallHandler,
  ): Observable<unknown> | Promise<Observable<unknown>> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<Record<symbol, unknown>>();
    const deferred = request[DEFERRED] as DeferredProtection | undefined;
    if (deferred !== undefined) {
      request[DEFERRED] = undefined;
      return deferred(context, next);
    }
    const settlement = request[SETTLEMENT] as HandlerSettlement | undefined;
    if (settlement === undefined) return next.handle();
    settlement.entered = true;
    const value = lastValueFrom(next.handle(), { defaultValue: undefined });
    value.then(
      (result) => settlement.report({ kind: 'value', value: result }),
      (error: unknown) => settlement.report({ kind: 'error', error }),
    );
    return from(value);
  }
}

/** Whether `interceptor` is `HandlerSettlementInterceptor`, of either build of this package. */
export function isHandlerSettlementInterceptor(interceptor: unknown): boolean {
  return (
    typeof interceptor === 'function' &&
    (interceptor as unknown as Record<symbol, unknown>)[SETTLEMENT_INTERCEPTOR] === true
  );
}

/** Makes `HandlerSettlementInterceptor` the route's innermost interceptor, once. */
export function reportHandlerSettlement(
  target: object,
  propertyKey: string | symbol,
  descriptor: PropertyDescriptor,
): void {
  const applied = (Reflect.getMetadata(INTERCEPTORS_METADATA, descriptor.value as object) ??
    []) as unknown[];
  if (applied.some(isHandlerSettlementInterceptor)) return;
  UseInterceptors(HandlerSettlementInterceptor)(target, propertyKey, descriptor);
}
