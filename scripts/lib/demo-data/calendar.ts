/**
 * Calendar arithmetic on whole UTC days (days since 1970-01-01), so generated dates never depend on the
 * machine's time zone, plus the demand curve that spreads orders over 2023-2025.
 */
import { type Rng, uniformInt } from "../../../src/core/rng";

const MS_PER_DAY = 86_400_000;

export function dayOf(iso: string): number {
  const [y, m, d] = iso.split("-").map(Number);
  if (y === undefined || m === undefined || d === undefined) throw new Error(`bad date ${iso}`);
  return Math.round(Date.UTC(y, m - 1, d) / MS_PER_DAY);
}

export function isoDate(day: number): string {
  return new Date(day * MS_PER_DAY).toISOString().slice(0, 10);
}

/** `seconds` is the time of day in seconds. */
export function isoDateTime(day: number, seconds: number): string {
  const s = Math.max(0, Math.min(86_399, Math.floor(seconds)));
  return new Date(day * MS_PER_DAY + s * 1000).toISOString().slice(0, 19).replace("T", " ");
}

export function monthOf(day: number): number {
  return new Date(day * MS_PER_DAY).getUTCMonth() + 1;
}

export function yearOf(day: number): number {
  return new Date(day * MS_PER_DAY).getUTCFullYear();
}

/** 0 = Sunday. */
export function weekdayOf(day: number): number {
  return new Date(day * MS_PER_DAY).getUTCDay();
}

/** The order history covers these days; the database is a snapshot taken at the end of LAST_DAY. */
export const FIRST_DAY = dayOf("2023-01-01");
export const LAST_DAY = dayOf("2025-12-31");

export function dayBetween(rng: Rng, first: number, last: number): number {
  return first + uniformInt(rng, last - first + 1);
}

/** Bike shops sell in spring and summer; December gets a gift bump; the chain grows year over year. */
const MONTH_DEMAND = [0.45, 0.5, 0.8, 1.15, 1.4, 1.5, 1.45, 1.25, 1.0, 0.75, 0.8, 1.05] as const;
const YEAR_GROWTH: Readonly<Record<number, number>> = { 2023: 1.0, 2024: 1.14, 2025: 1.27 };
const WEEKDAY_DEMAND = [1.35, 0.8, 0.85, 0.85, 0.95, 1.1, 1.5] as const;

export interface DaySampler {
  sample(rng: Rng): number;
}

/** Draws an order day from the demand curve by inverse CDF over every day of the history. */
export function demandSampler(): DaySampler {
  const cumulative: number[] = [];
  let total = 0;
  for (let d = FIRST_DAY; d <= LAST_DAY; d++) {
    total += (MONTH_DEMAND[monthOf(d) - 1] ?? 1) * (YEAR_GROWTH[yearOf(d)] ?? 1) * (WEEKDAY_DEMAND[weekdayOf(d)] ?? 1);
    cumulative.push(total);
  }
  return {
    sample(rng: Rng): number {
      const target = rng.next() * total;
      let lo = 0;
      let hi = cumulative.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((cumulative[mid] ?? total) > target) hi = mid;
        else lo = mid + 1;
      }
      return FIRST_DAY + lo;
    },
  };
}
