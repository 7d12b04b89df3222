import { Injectable } from '@nestjs/common';
import type { ConfigurableModuleOptionsFactory } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { OncelyModuleFactoryOptions } from '@oncely/nestjs';
import { RedisFlightCoordinator } from '@oncely/redis';

@Injectable()
export class OncelyConfig implements ConfigurableModuleOptionsFactory<
  OncelyModuleFactoryOptions,
  'create'
> {
  constructor(private readonly config: ConfigService) {}

  create(): OncelyModuleFactoryOptions {
    return { coordinator: new RedisFlightCoordinator(this.config.getOrThrow<string>('REDIS_URL')) };
  }
}
