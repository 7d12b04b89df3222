import { runInNewContext } from 'node:vm';
import { isConnectionLost } from '../src/record-dialect.js';

/**
 * Under an app's Jest, the driver's errors may come from another realm than the store's code:
 * they are no `instanceof Error` there, and must be classified all the same.
 */
describe('isConnectionLost with errors from another realm', () => {
  it.each([
    ["new Error('Connection terminated unexpectedly')", true],
    ["Object.assign(new Error('x'), { name: 'QueryRunnerAlreadyReleasedError' })", true],
    ["new Error('duplicate key value violates unique constraint')", false],
  ])('%s: %s', (source, lost) => {
    const error = runInNewContext(source) as unknown;
    expect(error instanceof Error).toBe(false);
    expect(isConnectionLost(error)).toBe(lost);
  });
});
