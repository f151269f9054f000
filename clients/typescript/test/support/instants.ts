// Instants for the test, as nanoseconds since the epoch (bigint), and their texts.

export const NANOS_PER_SECOND = 1_000_000_000n;
export const SECOND = NANOS_PER_SECOND;
export const MINUTE = 60n * SECOND;
export const HOUR = 60n * MINUTE;
export const DAY = 24n * HOUR;

export function nowNanos(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

/** Which way to write an instant: every form the server reads. */
export type Form = "full" | "micros" | "millis" | "seconds" | "minutes" | { offsetMinutes: number };

/**
 * `at` as an ISO 8601 text: in UTC with as many fraction digits as it needs ("full"), or cut to
 * a coarser form (the instant is then rounded down to it), or at an offset.
 */
export function formatInstant(at: bigint, form: Form = "full"): string {
  if (typeof form === "object") {
    const local = formatInstant(at + BigInt(form.offsetMinutes) * MINUTE, "full").slice(0, -1);
    const sign = form.offsetMinutes < 0 ? "-" : "+";
    const minutes = Math.abs(form.offsetMinutes);
    return `${local}${sign}${pad(Math.floor(minutes / 60), 2)}:${pad(minutes % 60, 2)}`;
  }
  const seconds = floorDiv(at, NANOS_PER_SECOND);
  const nanos = Number(at - seconds * NANOS_PER_SECOND);
  const days = Number(floorDiv(seconds, 86_400n));
  const secondOfDay = Number(seconds - BigInt(days) * 86_400n);
  const [year, month, day] = civilFromDays(days);
  const date = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
  const hh = pad(Math.floor(secondOfDay / 3600), 2);
  const mm = pad(Math.floor((secondOfDay % 3600) / 60), 2);
  const ss = pad(secondOfDay % 60, 2);
  switch (form) {
    case "minutes":
      return `${date}T${hh}:${mm}Z`;
    case "seconds":
      return `${date}T${hh}:${mm}:${ss}Z`;
    case "millis":
      return `${date}T${hh}:${mm}:${ss}.${pad(Math.floor(nanos / 1e6), 3)}Z`;
    case "micros":
      return `${date}T${hh}:${mm}:${ss}.${pad(Math.floor(nanos / 1e3), 6)}Z`;
    case "full": {
      const fraction = nanos === 0 ? "" : `.${pad(nanos, 9).replace(/0+$/, "")}`;
      return `${date}T${hh}:${mm}:${ss}${fraction}Z`;
    }
  }
}

function pad(value: number, width: number): string {
  return value.toString().padStart(width, "0");
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** The date `days` after 1970-01-01 (H. Hinnant's algorithm). */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return [year, month, day];
}
