import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { OncelyEvent } from '@oncely/core';
import { Subject, type Observable } from 'rxjs';

/** One oncely decision as the page shows it: ids and hashes only, never raw input. */
export interface Decision {
  readonly at: string;
  readonly mechanism: OncelyEvent['mechanism'];
  readonly outcome: OncelyEvent['outcome'];
  readonly operation?: string;
  readonly key: string;
  readonly durationMs?: number;
}

/** Fans oncely's events out to the Server-Sent Events clients of `/decisions`. */
@Injectable()
export class DecisionFeed implements OnModuleDestroy {
  private readonly decisions = new Subject<Decision>();

  /** The listener handed to `OncelyModule` (`events` option). */
  readonly listener = (event: OncelyEvent): void => {
    this.decisions.next({
      at: new Date().toISOString(),
      mechanism: event.mechanism,
      outcome: event.outcome,
      ...(event.operation !== undefined && { operation: event.operation }),
      key: event.key,
      ...(event.durationMs !== undefined && { durationMs: Math.round(event.durationMs) }),
    });
  };

  get stream(): Observable<Decision> {
    return this.decisions.asObservable();
  }

  onModuleDestroy(): void {
    this.decisions.complete();
  }
}
