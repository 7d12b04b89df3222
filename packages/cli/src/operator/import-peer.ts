import { isMissingModule, MissingPeerError } from './missing-peer.error.js';

/** What each connection flag loads, in the order it loads it. */
export const PEERS_OF = {
  '--redis': ['ioredis', '@oncely/redis'],
  '--database': ['typeorm', '@oncely/typeorm'],
} as const;

/**
 * Loads an optional peer for `flag`, turning "module not found" into a `MissingPeerError` that
 * says what to install. `load` is the `import()` itself, written out at the call so that
 * bundlers and the dependency check see which package it is.
 */
export async function importPeer<T>(
  packageName: string,
  flag: keyof typeof PEERS_OF,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isMissingModule(error, packageName)) {
      throw new MissingPeerError(packageName, flag, PEERS_OF[flag], { cause: error });
    }
    throw error;
  }
}
