/**
 * The catalogue side: categories, products, suppliers and who supplies what, and the promotion calendar.
 * Products also carry what the order generator needs but the database does not show directly: when a
 * product can be sold, how popular it is and how well it is liked (which drives ratings and returns).
 */
import { type Rng, normal } from "../../../src/core/rng";
import { dayBetween, dayOf, isoDate } from "./calendar";
import { BIKE_TRIMS, CATEGORY_TREE, type Group, PRODUCT_LINES, SUPPLIER_DEFS } from "./product-lines";
import { between, chance, pick, shelfPriceCents } from "./random";
import { type Row, dollars } from "./sql-writer";

export interface Product {
  id: number;
  name: string;
  categoryId: number;
  /** Top-level category id, for promotions that cover a whole department. */
  departmentId: number;
  group: Group;
  priceCents: number;
  launchDay: number;
  /** Discontinued products sell until this day; undefined while still sold. */
  sellUntil: number | undefined;
  popularity: number;
  /** Mean review rating this product earns, 1-5. */
  appeal: number;
}

export interface Promotion {
  id: number;
  pct: number;
  /** undefined applies to every product. */
  categoryId: number | undefined;
  startDay: number;
  endDay: number;
}

export interface Catalog {
  categories: Row[];
  products: Row[];
  suppliers: Row[];
  productSuppliers: Row[];
  promotions: Row[];
  items: Product[];
  promos: Promotion[];
}

const BRAND_PREMIUM: Readonly<Record<string, number>> = { "Velo & Co": 0.85, Ridgeline: 1.1, Ampere: 1.08, Sprout: 0.95 };
const COST_SHARE: Readonly<Record<Group, readonly [number, number]>> = {
  bike: [0.56, 0.66],
  component: [0.45, 0.55],
  accessory: [0.38, 0.5],
  apparel: [0.34, 0.45],
};

export function categoryId(name: string): number {
  const i = CATEGORY_TREE.findIndex((c) => c.name === name);
  if (i < 0) throw new Error(`unknown category ${name}`);
  return i + 1;
}

export function generateCatalog(rng: Rng): Catalog {
  const categories: Row[] = CATEGORY_TREE.map((c, i) => ({ category_id: i + 1, name: c.name, parent_id: c.parent === undefined ? null : c.parent + 1 }));
  const suppliers: Row[] = SUPPLIER_DEFS.map((s, i) => ({
    supplier_id: i + 1,
    name: s.name,
    country: s.country,
    contact_email: s.active ? `orders@${s.name.split(" ").slice(0, 2).join("").toLowerCase().replace(/[^a-z]/g, "")}.example.com` : null,
    lead_time_days: s.leadTimeDays,
    is_active: s.active ? 1 : 0,
  }));

  const products: Row[] = [];
  const items: Product[] = [];
  const productSuppliers: Row[] = [];
  for (const line of PRODUCT_LINES) {
    const catId = categoryId(line.category);
    const departmentId = (CATEGORY_TREE[catId - 1]?.parent ?? 0) + 1;
    for (const variant of variants(rng, line.group, line.brands, line.items, line.colors, line.count)) {
      const id = items.length + 1;
      const isBike = line.group === "bike";
      const modelYear = isBike ? between(rng, 2022, 2025) : null;
      const launchDay = modelYear !== null ? dayOf(`${modelYear - 1}-07-15`) + between(rng, 0, 90) : chance(rng, 0.8) ? dayBetween(rng, dayOf("2017-01-01"), dayOf("2022-12-31")) : dayBetween(rng, dayOf("2023-01-01"), dayOf("2025-06-30"));
      const sellUntil = discontinuedAfter(rng, modelYear);
      const priceCents = Math.max(499, shelfPriceCents(variant.basePrice * (BRAND_PREMIUM[variant.brand] ?? 1) * (1 + line.priceSpread * normal(rng))));
      const [wLo, wHi] = line.weightKg ?? [0, 0];
      const weight = line.weightKg === undefined || chance(rng, 0.05) ? null : Math.round((wLo + rng.next() * (wHi - wLo)) * 100) / 100;
      products.push({
        product_id: id,
        sku: `${line.group.slice(0, 2).toUpperCase()}${String(catId).padStart(2, "0")}-${String(1000 + id * 7).padStart(4, "0")}`,
        name: variant.name,
        brand: variant.brand,
        category_id: catId,
        model_year: modelYear,
        color: variant.color,
        list_price: dollars(priceCents),
        weight_kg: weight,
        launched_on: isoDate(launchDay),
        is_discontinued: sellUntil === undefined ? 0 : 1,
      });
      // A few products are everyone's favourite or a known lemon; most sit in between.
      const appeal = chance(rng, 0.06) ? 2 + rng.next() * 0.8 : Math.min(4.9, 4.05 + 0.4 * normal(rng));
      // Cheap consumables (tubes, bars, bottles) sell far more often than big-ticket parts.
      const popularity = Math.exp(0.7 * normal(rng)) * (isBike ? 1 : Math.sqrt(Math.min(8, 6_000 / priceCents)));
      items.push({ id, name: variant.name, categoryId: catId, departmentId, group: line.group, priceCents, launchDay, sellUntil, popularity, appeal });
      productSuppliers.push(...sourcing(rng, id, variant.brand, line.group, priceCents, sellUntil !== undefined));
    }
  }
  const { promotions, promos } = promotionCalendar();
  return { categories, products, suppliers, productSuppliers, promotions, items, promos };
}

interface Variant {
  name: string;
  brand: string;
  color: string | null;
  basePrice: number;
}

/** Distinct brand/model combinations, shuffled, so every product name in the catalogue is unique. */
function variants(rng: Rng, group: Group, brands: readonly string[], models: readonly (readonly [string, number])[], colors: readonly string[] | undefined, count: number): Variant[] {
  const all: Variant[] = [];
  for (const brand of brands) {
    for (const [model, price] of models) {
      if (group === "bike") {
        const trims = price < 500 ? BIKE_TRIMS.slice(0, 2) : BIKE_TRIMS;
        for (const [trim, factor] of trims) all.push({ name: `${brand} ${model} ${trim}`, brand, color: colors === undefined ? null : pick(rng, colors), basePrice: price * factor });
      } else if (group === "apparel" && colors !== undefined) {
        for (const color of colors) all.push({ name: `${brand} ${model} - ${color}`, brand, color, basePrice: price });
      } else {
        all.push({ name: `${brand} ${model}`, brand, color: colors === undefined ? null : pick(rng, colors), basePrice: price });
      }
    }
  }
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    const a = all[i];
    const b = all[j];
    if (a !== undefined && b !== undefined) {
      all[i] = b;
      all[j] = a;
    }
  }
  if (all.length < count) throw new Error(`only ${all.length} distinct products for a line of ${count}`);
  return all.slice(0, count);
}

/** Old model years are cleared out; a few other products are dropped at some point in 2024-2025. */
function discontinuedAfter(rng: Rng, modelYear: number | null): number | undefined {
  if (modelYear === 2022 && chance(rng, 0.85)) return dayBetween(rng, dayOf("2023-10-01"), dayOf("2024-06-30"));
  if (modelYear === 2023 && chance(rng, 0.35)) return dayBetween(rng, dayOf("2024-09-01"), dayOf("2025-06-30"));
  if (modelYear === null && chance(rng, 0.06)) return dayBetween(rng, dayOf("2024-01-01"), dayOf("2025-09-30"));
  return undefined;
}

function sourcing(rng: Rng, productId: number, brand: string, group: Group, priceCents: number, discontinued: boolean): Row[] {
  const primary = SUPPLIER_DEFS.findIndex((s) => s.brands.includes(brand));
  const [lo, hi] = COST_SHARE[group];
  const cost = priceCents * (lo + rng.next() * (hi - lo));
  const rows: Row[] = [{ product_id: productId, supplier_id: primary + 1, unit_cost: dollars(cost), is_primary: 1 }];
  if (chance(rng, 0.45)) {
    rows.push({ product_id: productId, supplier_id: between(rng, 1, 2), unit_cost: dollars(cost * (1.04 + rng.next() * 0.06)), is_primary: 0 });
  } else if (discontinued && chance(rng, 0.5)) {
    rows.push({ product_id: productId, supplier_id: SUPPLIER_DEFS.length, unit_cost: dollars(cost * 1.02), is_primary: 0 });
  }
  return rows;
}

const YEARLY_PROMOTIONS = [
  { code: "SPRING", name: "Spring Tune-Up Sale", pct: 15, category: "Components", from: "03-15", to: "04-15" },
  { code: "MEMDAY", name: "Memorial Day Bike Sale", pct: 10, category: "Bikes", from: "05-22", to: "05-31" },
  { code: "JULY4", name: "Independence Day Sale", pct: 12, category: undefined, from: "06-30", to: "07-06" },
  { code: "SCHOOL", name: "Back to School Kids' Bikes", pct: 15, category: "Kids' Bikes", from: "08-10", to: "09-05" },
  { code: "BLACKFRI", name: "Black Friday Weekend", pct: 20, category: undefined, from: "11-24", to: "11-30" },
  { code: "HOLIDAY", name: "Holiday Gear Gifts", pct: 25, category: "Accessories", from: "12-01", to: "12-24" },
  { code: "WINTERKIT", name: "Winter Apparel Clearance", pct: 30, category: "Apparel", from: "01-08", to: "02-15" },
] as const;

const ONE_OFF_PROMOTIONS = [
  { code: "EBIKE24", name: "Earth Week E-Bike Days", pct: 8, category: "Electric Bikes", from: "2024-04-16", to: "2024-04-28" },
  { code: "SALEMOPEN", name: "Salem Grand Opening", pct: 15, category: undefined, from: "2024-04-13", to: "2024-04-21" },
  { code: "BELLOPEN", name: "Bellingham Grand Opening", pct: 15, category: undefined, from: "2023-09-16", to: "2023-09-24" },
  { code: "HELMET25", name: "Helmet Safety Month", pct: 20, category: "Helmets", from: "2025-05-01", to: "2025-05-31" },
] as const;

function promotionCalendar(): { promotions: Row[]; promos: Promotion[] } {
  const defs: { code: string; name: string; pct: number; category: string | undefined; from: string; to: string }[] = [];
  for (const year of [2023, 2024, 2025]) {
    for (const p of YEARLY_PROMOTIONS) defs.push({ ...p, code: `${p.code}${year % 100}`, name: `${p.name} ${year}`, from: `${year}-${p.from}`, to: `${year}-${p.to}` });
  }
  defs.push(...ONE_OFF_PROMOTIONS);
  defs.sort((a, b) => a.from.localeCompare(b.from) || a.code.localeCompare(b.code));
  const promos = defs.map((d, i) => ({ id: i + 1, pct: d.pct, categoryId: d.category === undefined ? undefined : categoryId(d.category), startDay: dayOf(d.from), endDay: dayOf(d.to) }));
  const promotions = defs.map((d, i) => ({
    promotion_id: i + 1,
    code: d.code,
    name: d.name,
    discount_pct: d.pct,
    category_id: d.category === undefined ? null : categoryId(d.category),
    starts_on: d.from,
    ends_on: d.to,
  }));
  return { promotions, promos };
}
