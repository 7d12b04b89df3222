const DAY_MS = 86_400_000;
/** Days from 0000-03-01 to 1970-01-01: the civil calendar below counts years from March. */
const EPOCH_SHIFT_DAYS = 719_468;
const DAYS_PER_ERA = 146_097;

const twoDigits = (value: number) => (value < 10 ? `0${value}` : `${value}`);
const threeDigits = (value: number) =>
  value < 10 ? `00${value}` : value < 100 ? `0${value}` : `${value}`;

/**
 * `date.toISOString()` for a valid Date. The built-in is a call into the runtime that costs as
 * much as canonicalising a small object; the arithmetic (H. Hinnant's `civil_from_days`) is
 * cheaper. Years outside 1000–9999 (other widths, signs) are left to the built-in.
 */
export function isoDateText(date: Date): string {
  const time = date.getTime();
  const days = Math.floor(time / DAY_MS);
  const era = Math.floor((days + EPOCH_SHIFT_DAYS) / DAYS_PER_ERA);
  const dayOfEra = days + EPOCH_SHIFT_DAYS - era * DAYS_PER_ERA;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear =
    dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  if (year < 1000 || year > 9999) {
    return date.toISOString();
  }
  let rest = time - days * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const milliseconds = rest - seconds * 1000;
  return `${year}-${twoDigits(month)}-${twoDigits(day)}T${twoDigits(hours)}:${twoDigits(minutes)}:${twoDigits(seconds)}.${threeDigits(milliseconds)}Z`;
}
