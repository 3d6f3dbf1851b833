/**
 * The times the service accepts (the `date-time` format of every schema): RFC 3339 instants, as
 * ajv-formats' full `date-time` checks them, that name a moment JavaScript's Date can hold. The
 * format alone allows a leap second (`23:59:60`), which Date cannot hold (it became an invalid
 * date, stored as 1970), and any year.
 */
import { fullFormats } from 'ajv-formats/dist/formats';

/** The earliest and latest years an instant may name. */
export const INSTANT_YEARS = { first: 1970, last: 9999 } as const;

const rfc3339 = fullFormats['date-time'] as { validate: (value: string) => boolean };

/** Whether `value` is an RFC 3339 date-time naming a real instant from 1970 to 9999 (no leap second). */
export function isInstant(value: string): boolean {
  if (!rfc3339.validate(value)) return false;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) return false;
  const year = new Date(ms).getUTCFullYear();
  return year >= INSTANT_YEARS.first && year <= INSTANT_YEARS.last;
}

/** What ajv's `date-time` format is replaced with (requests and queries alike). */
export const INSTANT_FORMAT = { type: 'string', validate: isInstant } as const;
