/**
 * Makes an unreachable Redis surface within `commandTimeout` as `CoordinatorUnavailableError`,
 * instead of a command parked in ioredis' offline queue until Redis returns. The check runs on
 * the client's own state, so it also holds for clients the user configured differently.
 */
import { types } from 'node:util';
import { CoordinatorUnavailableError } from '@oncely/core';
import type { Cluster, Redis } from 'ioredis';

/**
 * Server replies that mean "cannot serve now" rather than "your command is wrong": a server still
 * loading, a cluster without quorum or mid-failover, a replica, a busy script, a full memory.
 */
const unavailableReplies = /^(LOADING|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|BUSY|OOM)\b/;

export class RedisAvailability {
  /** One wait for an attempt in progress, shared by every call made meanwhile. */
  private connecting: Promise<void> | undefined;

  constructor(
    private readonly client: Redis | Cluster,
    private readonly backend: string,
    private readonly commandTimeout: number,
  ) {}

  /** Runs one command, bounded by `commandTimeout`, translating transport failures. */
  run<T>(command: () => Promise<T>): Promise<T> {
    if (this.client.status === 'ready') return this.within(command());
    return this.whenReady().then(() => this.within(command()));
  }

  /** Resolves once the client is ready, waiting at most `commandTimeout` for it. */
  async ready(): Promise<void> {
    if (this.client.status !== 'ready') await this.whenReady();
  }

  /** Bounds `pending` by `commandTimeout`, failing with `CoordinatorUnavailableError`. */
  within<T>(pending: Promise<T>): Promise<T> {
    // Hand-rolled rather than Promise.race in async functions: this is on every hot path.
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(this.unavailable(new Error(`no reply within ${this.commandTimeout} ms`))),
        this.commandTimeout,
      );
      pending.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(this.translate(error));
        },
      );
    });
  }

  unavailable(cause: unknown): CoordinatorUnavailableError {
    return new CoordinatorUnavailableError(this.backend, { cause });
  }

  /**
   * Waits for a connection attempt in progress (start-up, or a reconnect that is under way); a
   * client known to be disconnected (waiting to retry, or ended) fails at once.
   */
  private whenReady(): Promise<void> {
    const client = this.client;
    if (client.status === 'wait') client.connect().catch(() => undefined);
    else if (client.status !== 'connecting' && client.status !== 'connect') {
      return Promise.reject(this.unavailable(new Error(`the connection is ${client.status}`)));
    }
    this.connecting ??= this.untilReady().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private untilReady(): Promise<void> {
    const client = this.client;
    return new Promise((resolve, reject) => {
      const settle = (error?: Error) => {
        clearTimeout(timer);
        client.off('ready', onReady);
        client.off('close', onClose);
        client.off('end', onClose);
        if (error) reject(this.unavailable(error));
        else resolve();
      };
      const onReady = () => settle();
      const onClose = () => settle(new Error('the connection closed while connecting'));
      const timer = setTimeout(
        () => settle(new Error(`not connected within ${this.commandTimeout} ms`)),
        this.commandTimeout,
      );
      client.once('ready', onReady);
      client.once('close', onClose);
      client.once('end', onClose);
    });
  }

  /**
   * A server reply is a real answer (passed on as is) unless it is one of the "cannot serve now"
   * replies; anything that is not a reply is a transport failure. Socket errors are made by Node
   * itself, in another realm than the app's when a test runner such as Jest runs it: `isNativeError`
   * recognises them where `instanceof Error` would not.
   */
  private translate(error: unknown): Error {
    if (!types.isNativeError(error)) return this.unavailable(new Error(String(error)));
    if (error.name === 'ReplyError' && !unavailableReplies.test(error.message)) return error;
    return this.unavailable(error);
  }
}
