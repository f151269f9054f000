// Instants as the server reads them (`till_core::instant::parse_instant`), as nanoseconds
// since the Unix epoch. The server compares instants to the nanosecond (an `issuedAt` may carry
// nine fractional digits), which a Date, to the millisecond, cannot.

/** Nanoseconds since 1970-01-01T00:00:00Z. */
export type Instant = bigint;

/** Why a date-time was refused, in the server's words. */
export const InstantProblem = {
  syntax: "must be an ISO 8601 date-time such as 2026-03-01T09:30:00Z",
  notUtc: "must end in Z (UTC)",
  notOnCalendar: "is not a real calendar date or time",
  outOfRange:
    "is out of the accepted range: years 0001 to 9998, or 0002 to 9997 when written with an offset",
} as const;

export type InstantProblem = (typeof InstantProblem)[keyof typeof InstantProblem];

export function compareInstants(a: Instant, b: Instant): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export class InstantError extends Error {
  constructor(readonly problem: InstantProblem) {
    super(problem);
    this.name = "InstantError";
  }
}

/**
 * Parses `YYYY-MM-DDTHH:MM[:SS[.fraction]]` then `Z`, or with `utcOnly` false also
 * `+hh:mm`/`-hh:mm`. Throws an InstantError naming what is wrong, checking in the server's
 * order so that a text wrong in two ways gets the same answer.
 */
export function parseInstant(text: string, utcOnly: boolean): Instant {
  const { local, offsetSeconds } = splitDesignator(text);
  if (offsetSeconds !== null && utcOnly) {
    throw new InstantError(InstantProblem.notUtc);
  }
  // A year a step inside the range with an offset, so that the instant is one of 0001-9998 in UTC.
  const [firstYear, lastYear] = offsetSeconds === null ? [1, 9998] : [2, 9997];
  if (local.length < 16 || local[4] !== "-" || local[7] !== "-" || local[10] !== "T" || local[13] !== ":") {
    throw new InstantError(InstantProblem.syntax);
  }
  const year = digits(local, 0, 4);
  if (year < firstYear || year > lastYear) {
    throw new InstantError(InstantProblem.outOfRange);
  }
  const month = digits(local, 5, 2);
  const day = digits(local, 8, 2);
  const hour = digits(local, 11, 2);
  const minute = digits(local, 14, 2);
  let second = 0;
  let nanos = 0;
  const rest = local.slice(16);
  if (rest.length > 0) {
    if (rest.length < 3 || rest[0] !== ":") {
      throw new InstantError(InstantProblem.syntax);
    }
    second = digits(rest, 1, 2);
    const fraction = rest.slice(3);
    if (fraction.length > 0) {
      if (!/^\.[0-9]{1,9}$/.test(fraction)) {
        throw new InstantError(InstantProblem.syntax);
      }
      nanos = Number(fraction.slice(1).padEnd(9, "0"));
    }
  }
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) {
    throw new InstantError(InstantProblem.notOnCalendar);
  }
  const seconds = daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - (offsetSeconds ?? 0);
  return BigInt(seconds) * 1_000_000_000n + BigInt(nanos);
}

/** The local part and the offset (null for `Z`). */
function splitDesignator(text: string): { local: string; offsetSeconds: number | null } {
  if (text.endsWith("Z")) {
    return { local: text.slice(0, -1), offsetSeconds: null };
  }
  // `+hh:mm` or `-hh:mm`; the sign must come after the date part (which has `-` of its own).
  if (text.length > 6) {
    const zone = text.slice(-6);
    if ((zone[0] === "+" || zone[0] === "-") && zone[3] === ":") {
      const hours = digits(zone, 1, 2);
      const minutes = digits(zone, 4, 2);
      if (hours > 23 || minutes > 59) {
        throw new InstantError(InstantProblem.notOnCalendar);
      }
      const seconds = hours * 3600 + minutes * 60;
      return { local: text.slice(0, -6), offsetSeconds: zone[0] === "-" ? -seconds : seconds };
    }
  }
  throw new InstantError(text.endsWith("z") ? InstantProblem.syntax : InstantProblem.notUtc);
}

/** `count` ASCII digits of `text` from `at`, as a number. */
function digits(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const code = text.charCodeAt(i);
    if (!(code >= 48 && code <= 57)) {
      throw new InstantError(InstantProblem.syntax);
    }
    value = value * 10 + (code - 48);
  }
  return value;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return leap ? 29 : 28;
  }
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's algorithm). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}
