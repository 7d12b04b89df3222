import { RouteOptionsError } from '@oncely/core';
import { IdempotentKey, SingleFlight } from '@oncely/nestjs';

describe('maxDuration on the decorators', () => {
  it('is checked when @IdempotentKey and @SingleFlight are applied, naming the option', () => {
    const declareIdempotent = () => {
      class Orders {
        @IdempotentKey({ operation: 'order', scope: 'user.tenantId', maxDuration: 0 })
        create() {}
      }
      return Orders;
    };
    const declareFlight = () => {
      class Reports {
        @SingleFlight({ operation: 'report', target: 'params.id', maxDuration: 1.5 })
        get() {}
      }
      return Reports;
    };
    expect(declareIdempotent).toThrow(RouteOptionsError);
    expect(declareIdempotent).toThrow(/"maxDuration" on Orders\.create/);
    expect(declareFlight).toThrow(/"maxDuration" on Reports\.get/);
  });

  it('accepts a whole number of milliseconds', () => {
    expect(() => {
      class Orders {
        @IdempotentKey({ operation: 'order', scope: 'user.tenantId', maxDuration: 60_000 })
        create() {}
      }
      return Orders;
    }).not.toThrow();
  });
});
