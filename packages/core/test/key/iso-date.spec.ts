import fc from 'fast-check';
import { isoDateText } from '../../src/key/iso-date.js';

describe('isoDateText', () => {
  it('writes what Date.prototype.toISOString writes, over the whole Date range', () => {
    fc.assert(
      fc.property(fc.date({ noInvalidDate: true }), (date) => {
        expect(isoDateText(date)).toBe(date.toISOString());
      }),
      { numRuns: 20_000 },
    );
  });

  it.each([
    ['the epoch and the millisecond before', [0, -1]],
    ['leap days', [Date.UTC(2000, 1, 29), Date.UTC(2024, 1, 29, 23, 59, 59, 999)]],
    [
      'the first and last day of years 1000 and 9999',
      [Date.UTC(1000, 0, 1), Date.UTC(9999, 11, 31, 23, 59, 59, 999)],
    ],
    [
      'years with other widths or signs',
      [Date.UTC(999, 11, 31), Date.UTC(10_000, 0, 1), -8.64e15, 8.64e15],
    ],
  ])('is exact at %s', (_, times) => {
    for (const time of times) {
      expect(isoDateText(new Date(time))).toBe(new Date(time).toISOString());
    }
  });
});
