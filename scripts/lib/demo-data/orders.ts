/**
 * Order baskets: when, where, by whom and what. Days follow the seasonal demand curve; online's share
 * grows each year; a till sale is credited to someone on that store's payroll that day; promotions apply
 * to the lines in their category while they run. Fulfilment (status, shipping, payments) comes later.
 */
import type { Rng } from "../../../src/core/rng";
import { dayOf, demandSampler, monthOf, yearOf } from "./calendar";
import type { Catalog, Product, Promotion } from "./catalog";
import type { Customer } from "./customers";
import { type Org, staffOnDuty } from "./org";
import { STORE_SITES } from "./places";
import type { Group } from "./product-lines";
import { between, chance, weightedIndex, weightedPick } from "./random";

export interface OrderLine {
  id: number;
  product: Product;
  quantity: number;
  unitCents: number;
  discountCents: number;
}

export interface Order {
  id: number;
  customer: Customer | undefined;
  storeId: number;
  employeeId: number | undefined;
  promotionId: number | undefined;
  channel: "in_store" | "online";
  day: number;
  seconds: number;
  lines: OrderLine[];
  shippingCents: number;
}

export function subtotalCents(order: Order): number {
  return order.lines.reduce((sum, l) => sum + l.unitCents * l.quantity, 0);
}

export function discountCents(order: Order): number {
  return order.lines.reduce((sum, l) => sum + l.discountCents, 0);
}

export function totalCents(order: Order): number {
  return subtotalCents(order) - discountCents(order) + order.shippingCents;
}

const LINES_PER_ORDER = [0.27, 0.28, 0.2, 0.12, 0.08, 0.05] as const;
const GROUP_MIX: Readonly<Record<Group, number>> = { bike: 0.085, component: 0.25, accessory: 0.4, apparel: 0.265 };
const GROUPS = Object.keys(GROUP_MIX) as Group[];
const ONLINE_SHARE: Readonly<Record<number, number>> = { 2023: 0.3, 2024: 0.36, 2025: 0.42 };
const GUEST_SHARE = 0.08;
const PROMO_TAKE_UP = 0.6;
/** Online orders of customers without a nearby store ship from the two flagship stores. */
const FLAGSHIPS = [1, 2] as const;

export function generateOrders(rng: Rng, count: number, org: Org, catalog: Catalog, customers: readonly Customer[]): Order[] {
  const days = demandSampler();
  const slots = Array.from({ length: count }, () => ({ day: days.sample(rng), seconds: 0, online: false }));
  for (const s of slots) {
    s.online = chance(rng, ONLINE_SHARE[yearOf(s.day)] ?? 0.4);
    // Tills ring between 10:00 and 19:00; the web shop takes orders around the clock, mostly evenings.
    s.seconds = s.online ? Math.floor(86_400 * Math.pow(rng.next(), 0.7)) : between(rng, 10 * 3600, 19 * 3600);
  }
  slots.sort((a, b) => a.day - b.day || a.seconds - b.seconds);

  const openDays = STORE_SITES.map((s) => dayOf(s.openedOn));
  const byGroup = new Map<Group, Product[]>(GROUPS.map((g) => [g, catalog.items.filter((p) => p.group === g)]));
  const orders: Order[] = [];
  let lineId = 0;
  for (const slot of slots) {
    const open = STORE_SITES.map((_, i) => i + 1).filter((id) => (openDays[id - 1] ?? Infinity) <= slot.day);
    const customer = pickCustomer(rng, customers, slot.day, slot.online);
    let storeId: number;
    if (slot.online) {
      const home = customer?.homeStoreId;
      storeId = home !== undefined && open.includes(home) ? home : (FLAGSHIPS[weightedIndex(rng, [1.2, 1])] ?? 1);
    } else if (customer?.homeStoreId !== undefined && open.includes(customer.homeStoreId) && chance(rng, 0.85)) {
      storeId = customer.homeStoreId;
    } else {
      storeId = weightedPick(rng, open, (id) => STORE_SITES[id - 1]?.traffic ?? 1);
    }
    const onDuty = slot.online ? [] : staffOnDuty(org, storeId, slot.day);
    const employeeId = onDuty.length === 0 ? undefined : weightedPick(rng, onDuty, (s) => s.salesWeight).employeeId;

    const lines: OrderLine[] = [];
    const wanted = weightedIndex(rng, LINES_PER_ORDER) + 1;
    for (let attempt = 0; lines.length < wanted && attempt < wanted * 4; attempt++) {
      const hasBike = lines.some((l) => l.product.group === "bike");
      const group = GROUPS[weightedIndex(rng, GROUPS.map((g) => groupWeight(g, slot.day, hasBike)))] ?? "accessory";
      const available = (byGroup.get(group) ?? []).filter((p) => p.launchDay <= slot.day && (p.sellUntil === undefined || slot.day <= p.sellUntil) && !lines.some((l) => l.product.id === p.id));
      if (available.length === 0) continue;
      const product = weightedPick(rng, available, (p) => p.popularity);
      // Occasional till price-match: the line sells below list with no promotion behind it.
      const unitCents = !slot.online && chance(rng, 0.025) ? Math.round(product.priceCents * (0.9 + rng.next() * 0.05)) : product.priceCents;
      lines.push({ id: 0, product, quantity: quantityFor(rng, group), unitCents, discountCents: 0 });
    }
    if (lines.length === 0) continue;
    for (const l of lines) l.id = ++lineId;

    const promotionId = applyPromotion(rng, catalog.promos, slot.day, lines);
    const order: Order = { id: orders.length + 1, customer, storeId, employeeId, promotionId, channel: slot.online ? "online" : "in_store", day: slot.day, seconds: slot.seconds, lines, shippingCents: 0 };
    order.shippingCents = slot.online ? shippingFee(order) : 0;
    orders.push(order);
  }
  return orders;
}

function groupWeight(group: Group, day: number, hasBike: boolean): number {
  const month = monthOf(day);
  if (group === "bike") return hasBike ? 0 : GROUP_MIX.bike * (month >= 3 && month <= 8 ? 1.5 : month === 12 ? 1.2 : 0.6);
  if (group === "apparel") return GROUP_MIX.apparel * (month >= 11 || month <= 2 ? 1.4 : 1);
  return GROUP_MIX[group];
}

function quantityFor(rng: Rng, group: Group): number {
  if (group === "bike") return 1;
  const r = rng.next();
  if (group === "component") return r < 0.68 ? 1 : r < 0.9 ? 2 : between(rng, 3, 4);
  return r < 0.8 ? 1 : r < 0.96 ? 2 : 3;
}

/** Regulars order more; an account can order from the day after it was opened. Guests only buy at the till. */
function pickCustomer(rng: Rng, customers: readonly Customer[], day: number, online: boolean): Customer | undefined {
  if (!online && chance(rng, GUEST_SHARE)) return undefined;
  let hi = 0;
  while (hi < customers.length && (customers[hi]?.createdDay ?? Infinity) < day) hi++;
  if (hi === 0) return undefined;
  const eligible = customers.slice(0, hi).filter((c) => (online ? true : c.homeStoreId !== undefined));
  if (eligible.length === 0) return undefined;
  return weightedPick(rng, eligible, (c) => c.activity * (online && c.homeStoreId === undefined ? 2 : 1));
}

function covers(promo: Promotion, product: Product): boolean {
  return promo.categoryId === undefined || promo.categoryId === product.categoryId || promo.categoryId === product.departmentId;
}

function applyPromotion(rng: Rng, promos: readonly Promotion[], day: number, lines: OrderLine[]): number | undefined {
  const running = promos.filter((p) => p.startDay <= day && day <= p.endDay && lines.some((l) => covers(p, l.product)));
  if (running.length === 0 || !chance(rng, PROMO_TAKE_UP)) return undefined;
  const promo = weightedPick(rng, running, (p) => p.pct);
  for (const l of lines) {
    if (covers(promo, l.product)) l.discountCents = Math.round((l.unitCents * l.quantity * promo.pct) / 100);
  }
  return promo.id;
}

/** Free shipping over $75, except bikes, which ship free only over $1,500. */
function shippingFee(order: Order): number {
  const net = subtotalCents(order) - discountCents(order);
  if (order.lines.some((l) => l.product.group === "bike")) return net >= 150_000 ? 0 : 5_900;
  return net >= 7_500 ? 0 : 799;
}
