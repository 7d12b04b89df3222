import { ValidationPipe, type PipeTransform } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import type { ClassTransformOptions } from 'class-transformer';
import type { ValidatorOptions } from 'class-validator';
import type { OncelyValidationOptions } from '../oncely-module-options.interface.js';

/** The part of Nest's `ApplicationConfig` read here; public on Nest 10, 11 and 12. */
interface GlobalPipes {
  getGlobalPipes(): PipeTransform[];
}

/**
 * What a `ValidationPipe` was built with: protected fields set by its constructor on Nest 10, 11
 * and 12 (the options minus `transform`, `exceptionFactory` and the other pipe-only settings).
 */
interface ValidationPipeSettings {
  readonly validatorOptions?: ValidatorOptions;
  readonly transformOptions?: ClassTransformOptions;
}

/**
 * Reads, on each call, the settings of the app's first global `ValidationPipe`, registered with
 * `app.useGlobalPipes(...)` or as an `APP_PIPE` provider (Nest adds the instances of both to one
 * list, `ApplicationConfig#getGlobalPipes()`), so that a field the app strips never reaches a key.
 * Read per call because `useGlobalPipes` may run after the module is initialised. `undefined`
 * when the app has none, or registers it request-scoped.
 *
 * `ApplicationConfig` is not injectable; it is reached through the `container` every `ModuleRef`
 * holds (a protected field on Nest 10, 11 and 12, whose `NestContainer#applicationConfig` getter
 * is public). Should a future Nest move it, this reads nothing and bodies are validated with
 * class-validator's defaults, as before this existed.
 */
export function appValidationOptions(
  moduleRef: ModuleRef,
): () => OncelyValidationOptions | undefined {
  const config = (moduleRef as unknown as { container?: { applicationConfig?: GlobalPipes } })
    .container?.applicationConfig;
  return () => {
    const pipe = config?.getGlobalPipes().find((candidate) => candidate instanceof ValidationPipe);
    if (!pipe) return undefined;
    const { validatorOptions, transformOptions } = pipe as unknown as ValidationPipeSettings;
    return {
      ...(validatorOptions && { validator: validatorOptions }),
      ...(transformOptions && { transformer: transformOptions }),
    };
  };
}
