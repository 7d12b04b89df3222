import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';

/**
 * The demo's own Redis client (when `REDIS_URL` is set), lent to oncely's coordinator and used by
 * `/health`. oncely never closes a client it was given, so the demo closes it last.
 */
@Injectable()
export class DemoRedis implements OnApplicationShutdown {
  readonly client: Redis | undefined;

  constructor(url: string | undefined) {
    this.client = url ? new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2 }) : undefined;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client?.quit().catch(() => this.client?.disconnect());
  }
}
