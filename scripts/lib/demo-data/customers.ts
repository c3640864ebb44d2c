/**
 * Customer accounts. Ids follow signup order, as an auto-increment key would. The data has what a real
 * CRM export has: missing phones and emails, phone numbers typed four ways, and city names typed by hand
 * ('seattle', 'PORTLAND', a trailing space), which a query has to normalise to group by city.
 */
import { type Rng, normal } from "../../../src/core/rng";
import { dayBetween, dayOf, demandSampler, isoDateTime } from "./calendar";
import { FIRST_NAMES, LAST_NAMES, REMOTE_TOWNS, STORE_SITES, type Town } from "./places";
import { between, chance, pick, weightedIndex } from "./random";
import type { Row } from "./sql-writer";

export interface Customer {
  id: number;
  createdDay: number;
  /** undefined for online-only customers. */
  homeStoreId: number | undefined;
  /** Relative propensity to order. */
  activity: number;
  city: string;
  state: string;
}

export interface CustomerBase {
  rows: Row[];
  customers: Customer[];
}

const EMAIL_DOMAINS = ["gmail.com", "gmail.com", "gmail.com", "outlook.com", "yahoo.com", "icloud.com", "hotmail.com", "comcast.net", "proton.me"] as const;
const AREA_CODES: Readonly<Record<string, readonly string[]>> = {
  WA: ["206", "425", "253", "360", "509"],
  OR: ["503", "541", "971"],
  ID: ["208"],
  CA: ["415", "916"],
  MT: ["406"],
  CO: ["303", "720"],
  UT: ["801"],
  NV: ["775"],
  AK: ["907"],
};

export function generateCustomers(rng: Rng, count: number): CustomerBase {
  const days = demandSampler();
  const drafts = Array.from({ length: count }, () => {
    const createdDay = chance(rng, 0.35) ? dayBetween(rng, dayOf("2018-03-01"), dayOf("2022-12-31")) : Math.min(days.sample(rng), dayOf("2025-12-28"));
    return { createdDay, seconds: between(rng, 8 * 3600, 22 * 3600) };
  });
  drafts.sort((a, b) => a.createdDay - b.createdDay || a.seconds - b.seconds);

  const customers: Customer[] = [];
  const rows: Row[] = [];
  const emails = new Set<string>();
  drafts.forEach((draft, i) => {
    const id = i + 1;
    const remote = chance(rng, 0.1);
    // The CRM assigns the store nearest home, even one that opened after the customer signed up.
    const k = weightedIndex(rng, STORE_SITES.map((s) => s.traffic));
    const site = STORE_SITES[k];
    const town: Town = remote || site === undefined ? pick(rng, REMOTE_TOWNS) : site.catchment[weightedIndex(rng, site.catchment.map((_, t) => (t === 0 ? 3 : 1)))] ?? pick(rng, REMOTE_TOWNS);
    const homeStoreId = remote || site === undefined || chance(rng, 0.06) ? undefined : k + 1;
    const first = pick(rng, FIRST_NAMES);
    const last = pick(rng, LAST_NAMES);
    const city = typedCity(rng, town.city);
    customers.push({ id, createdDay: draft.createdDay, homeStoreId, activity: Math.exp(0.9 * normal(rng)), city: town.city, state: town.state });
    rows.push({
      customer_id: id,
      first_name: first,
      last_name: last,
      email: chance(rng, 0.07) ? null : personalEmail(rng, emails, first, last),
      phone: chance(rng, 0.14) ? null : phoneNumber(rng, town.state),
      city,
      state: town.state,
      postal_code: chance(rng, 0.03) ? null : pick(rng, town.zips),
      home_store_id: homeStoreId ?? null,
      birth_year: chance(rng, 0.42) ? null : between(rng, 1948, 2007),
      loyalty_tier: "standard",
      marketing_opt_in: chance(rng, 0.55) ? 1 : 0,
      created_at: isoDateTime(draft.createdDay, draft.seconds),
    });
  });
  return { rows, customers };
}

function typedCity(rng: Rng, city: string): string {
  const r = rng.next();
  if (r < 0.035) return city.toLowerCase();
  if (r < 0.055) return city.toUpperCase();
  if (r < 0.065) return `${city} `;
  return city;
}

function personalEmail(rng: Rng, taken: Set<string>, first: string, last: string): string {
  const f = first.toLowerCase().replace(/[^a-z]/g, "");
  const l = last.toLowerCase().replace(/[^a-z]/g, "");
  const styles = [`${f}.${l}`, `${f}${l}`, `${f[0] ?? ""}${l}`, `${f}_${l}`, `${l}.${f}`];
  const base = `${pick(rng, styles)}${chance(rng, 0.4) ? between(rng, 1, 99) : ""}`;
  const domain = pick(rng, EMAIL_DOMAINS);
  let email = `${base}@${domain}`;
  for (let n = 2; taken.has(email.toLowerCase()); n++) email = `${base}${n}@${domain}`;
  taken.add(email.toLowerCase());
  return chance(rng, 0.03) ? email.charAt(0).toUpperCase() + email.slice(1) : email;
}

/** 555-0100 to 555-0199 is the range reserved for fiction, so no number reaches a real person. */
function phoneNumber(rng: Rng, state: string): string {
  const area = pick(rng, AREA_CODES[state] ?? ["360"]);
  const line = String(between(rng, 100, 199)).padStart(4, "0");
  switch (between(rng, 0, 5)) {
    case 0:
      return `${area}-555-${line}`;
    case 1:
      return `${area}555${line}`;
    case 2:
      return `+1 ${area} 555 ${line}`;
    default:
      return `(${area}) 555-${line}`;
  }
}
