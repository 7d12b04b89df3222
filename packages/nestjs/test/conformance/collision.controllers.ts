import { Controller, Post, type Type } from '@nestjs/common';
import { ConformanceProbe } from '@oncely/core/testing';
import { IdempotentKey } from '@oncely/nestjs';

/**
 * Two controllers claiming the operation `collision` with identical options, declared when the
 * harness asks for them (a refused claim must fail that boot, not the loading of this file).
 */
export function collisionControllers(shared: boolean): Type[] {
  const options = { operation: 'collision', scope: 'user.tenantId', ...(shared && { shared }) };

  @Controller('collisions')
  class CollisionAController {
    constructor(private readonly probe: ConformanceProbe) {}

    @Post('a')
    @IdempotentKey(options)
    create() {
      return { route: 'a', execution: this.probe.hit('collision') };
    }
  }

  @Controller('collisions')
  class CollisionBController {
    constructor(private readonly probe: ConformanceProbe) {}

    @Post('b')
    @IdempotentKey(options)
    create() {
      return { route: 'b', execution: this.probe.hit('collision') };
    }
  }

  return [CollisionAController, CollisionBController];
}
