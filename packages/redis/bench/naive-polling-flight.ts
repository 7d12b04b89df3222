import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * The baseline: what a team writes without a coordinator. Check the result, try `SET NX` on a
 * lease, and if someone else holds it, GET the result every 50 ms until it appears or the lease
 * is free again. No Lua, no notices, no owner check on delete.
 */
export class NaivePollingFlight {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly leaseTtl = 10_000,
    private readonly resultTtl = 60_000,
    private readonly pollEvery = 50,
  ) {}

  async run<T>(
    key: string,
    work: () => Promise<T>,
  ): Promise<{ value: T; source: 'executed' | 'cached' | 'shared' }> {
    const resultKey = `${this.prefix}${key}:result`;
    const leaseKey = `${this.prefix}${key}:lease`;
    for (let attempt = 0; ; attempt++) {
      const cached = await this.redis.get(resultKey);
      if (cached !== null) {
        return { value: JSON.parse(cached) as T, source: attempt === 0 ? 'cached' : 'shared' };
      }
      if (await this.redis.set(leaseKey, randomUUID(), 'PX', this.leaseTtl, 'NX')) {
        const value = await work();
        await this.redis.set(resultKey, JSON.stringify(value), 'PX', this.resultTtl);
        await this.redis.del(leaseKey);
        return { value, source: 'executed' };
      }
      await new Promise((resolve) => setTimeout(resolve, this.pollEvery));
    }
  }
}
