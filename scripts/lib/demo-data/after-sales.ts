/**
 * After the sale: returns within the 30-day window (poorly liked products and wrong-size apparel come
 * back more often; an order whose every line came back becomes 'returned'), reviews that follow each
 * product's appeal, and loyalty tiers earned by net spend.
 */
import { type Rng, normal } from "../../../src/core/rng";
import { FIRST_DAY, LAST_DAY, isoDate, isoDateTime } from "./calendar";
import type { Customer } from "./customers";
import type { Fulfilled } from "./fulfilment";
import { type Org, staffOnDuty } from "./org";
import { type OrderLine, totalCents } from "./orders";
import { between, chance, pick } from "./random";
import { type Row, dollars } from "./sql-writer";

const RETURN_WINDOW_DAYS = 30;

export interface ReturnedLine {
  line: OrderLine;
  quantity: number;
  refundCents: number;
}

export function generateReturns(rng: Rng, fulfilled: Fulfilled[], org: Org): { rows: Row[]; returned: Map<number, ReturnedLine> } {
  const rows: Row[] = [];
  const returned = new Map<number, ReturnedLine>();
  for (const f of fulfilled) {
    if (f.status !== "delivered" || f.delivered === undefined) continue;
    const latest = Math.min(LAST_DAY, f.delivered.day + RETURN_WINDOW_DAYS);
    if (latest <= f.delivered.day) continue;
    const unhappy = f.order.lines.filter((l) => chance(rng, 0.018 * (l.product.appeal < 3 ? 4 : 1) * (l.product.group === "apparel" ? 1.8 : 1)));
    if (unhappy.length === 0) continue;
    const wholeOrder = chance(rng, 0.45);
    const day = f.delivered.day + between(rng, 1, latest - f.delivered.day);
    const onDuty = staffOnDuty(org, f.order.storeId, day);
    const processedBy = f.order.channel === "online" && chance(rng, 0.35) ? undefined : onDuty.length === 0 ? undefined : pick(rng, onDuty).employeeId;
    let allBack = true;
    for (const line of f.order.lines) {
      if (!wholeOrder && !unhappy.includes(line)) {
        allBack = false;
        continue;
      }
      const quantity = wholeOrder || line.quantity === 1 ? line.quantity : between(rng, 1, line.quantity);
      if (quantity < line.quantity) allBack = false;
      const net = line.unitCents * line.quantity - line.discountCents;
      const refundCents = Math.round((net * quantity) / line.quantity);
      const reason = returnReason(rng, line, wholeOrder);
      returned.set(line.id, { line, quantity, refundCents });
      rows.push({
        return_id: rows.length + 1,
        order_item_id: line.id,
        processed_by: processedBy ?? null,
        return_date: isoDate(day),
        quantity,
        reason,
        refund_amount: dollars(refundCents),
        restocked: reason === "defective" || reason === "damaged in transit" ? 0 : chance(rng, 0.92) ? 1 : 0,
      });
    }
    if (allBack) f.status = "returned";
  }
  return { rows, returned };
}

function returnReason(rng: Rng, line: OrderLine, wholeOrder: boolean): string {
  if (line.product.appeal < 3 && chance(rng, 0.6)) return pick(rng, ["defective", "not as described"]);
  if (line.product.group === "apparel" && chance(rng, 0.6)) return "wrong size";
  if (wholeOrder && chance(rng, 0.4)) return pick(rng, ["changed mind", "arrived late", "found a better price"]);
  return pick(rng, ["changed mind", "defective", "not as described", "damaged in transit", "wrong item sent"]);
}

const TITLES: Readonly<Record<number, readonly string[]>> = {
  1: ["Very disappointed", "Broke within weeks", "Do not buy"],
  2: ["Not great", "Expected better", "Meh"],
  3: ["It's okay", "Does the job", "Average"],
  4: ["Solid choice", "Happy with it", "Good value"],
  5: ["Love it!", "Excellent", "Best purchase this year", "Perfect"],
};
const BODIES: Readonly<Record<number, readonly string[]>> = {
  1: ["Stopped working after a few rides and the replacement took weeks.", "Poor build quality for the price."],
  2: ["Fit and finish could be better. Returned the first one.", "Works, but not as described on the website."],
  3: ["Does what it says. Nothing special.", "Fine for the price, a bit heavy."],
  4: ["Staff helped me pick the right size. Riding it every week.", "Good quality, shipping was quick."],
  5: ["Exactly what I needed, great advice from the store team.", "Commuting every day with it, zero issues so far."],
};

export function generateReviews(rng: Rng, fulfilled: readonly Fulfilled[], returned: ReadonlyMap<number, ReturnedLine>, customers: readonly Customer[]): Row[] {
  const drafts: { productId: number; customerId: number; orderId: number | null; rating: number; day: number; seconds: number }[] = [];
  const seen = new Set<string>();
  for (const f of fulfilled) {
    const customer = f.order.customer;
    if (customer === undefined || f.delivered === undefined) continue;
    for (const line of f.order.lines) {
      if (!chance(rng, line.product.group === "bike" ? 0.2 : 0.085)) continue;
      const key = `${line.product.id}/${customer.id}`;
      const day = f.delivered.day + between(rng, 2, 60);
      if (seen.has(key) || day > LAST_DAY) continue;
      seen.add(key);
      const disappointed = returned.has(line.id) ? 1.6 : 0;
      drafts.push({ productId: line.product.id, customerId: customer.id, orderId: f.order.id, rating: rating(line.product.appeal - disappointed + 0.9 * normal(rng)), day, seconds: between(rng, 6 * 3600, 23 * 3600) });
    }
  }
  // Some reviewers bought elsewhere: no order behind the review.
  const products = [...new Set(fulfilled.flatMap((f) => f.order.lines.map((l) => l.product)))];
  for (let i = 0; i < 70; i++) {
    const customer = pick(rng, customers);
    const product = pick(rng, products);
    const day = between(rng, Math.max(FIRST_DAY, customer.createdDay, product.launchDay), LAST_DAY);
    const key = `${product.id}/${customer.id}`;
    if (seen.has(key)) continue;
    seen.add(key);
    drafts.push({ productId: product.id, customerId: customer.id, orderId: null, rating: rating(product.appeal - 0.3 + normal(rng)), day, seconds: between(rng, 6 * 3600, 23 * 3600) });
  }
  drafts.sort((a, b) => a.day - b.day || a.seconds - b.seconds);
  return drafts.map((d, i) => ({
    review_id: i + 1,
    product_id: d.productId,
    customer_id: d.customerId,
    order_id: d.orderId,
    rating: d.rating,
    title: chance(rng, 0.1) ? null : pick(rng, TITLES[d.rating] ?? ["Review"]),
    body: chance(rng, 0.35) ? null : pick(rng, BODIES[d.rating] ?? ["-"]),
    created_at: isoDateTime(d.day, d.seconds),
  }));
}

function rating(x: number): number {
  return Math.max(1, Math.min(5, Math.round(x)));
}

/** Tier by lifetime net spend: what was paid for orders that were not cancelled, less refunds. */
export function loyaltyTiers(fulfilled: readonly Fulfilled[], returned: ReadonlyMap<number, ReturnedLine>): Map<number, string> {
  const spend = new Map<number, number>();
  for (const f of fulfilled) {
    const c = f.order.customer;
    if (c === undefined || f.status === "cancelled") continue;
    const refunds = f.order.lines.reduce((sum, l) => sum + (returned.get(l.id)?.refundCents ?? 0), 0);
    spend.set(c.id, (spend.get(c.id) ?? 0) + totalCents(f.order) - refunds);
  }
  const tiers = new Map<number, string>();
  for (const [id, cents] of spend) tiers.set(id, cents >= 500_000 ? "gold" : cents >= 150_000 ? "silver" : "standard");
  return tiers;
}
