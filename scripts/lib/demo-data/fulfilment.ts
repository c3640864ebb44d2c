/**
 * What happened to each order by the snapshot at the end of 2025: cancelled, handed over at the till,
 * or shipped by a carrier and perhaps delivered. Orders from the last days are still pending or in
 * transit, so their shipped_at / delivered_at are NULL, as they are for every cancelled order. Payments
 * include the failed and voided attempts a payment provider records, not only the captured money.
 */
import type { Rng } from "../../../src/core/rng";
import { LAST_DAY, isoDate, isoDateTime } from "./calendar";
import { type Order, totalCents } from "./orders";
import { between, chance, pick, weightedIndex } from "./random";
import type { OrderStatus } from "./schema";
import { type Row, dollars } from "./sql-writer";

export interface Stamp {
  day: number;
  seconds: number;
}

export interface Fulfilled {
  order: Order;
  status: OrderStatus;
  shipped: Stamp | undefined;
  delivered: Stamp | undefined;
}

const CARRIERS = [["UPS", 0.45], ["FedEx", 0.3], ["USPS", 0.25]] as const;
const SERVICE_LEVELS = [["ground", 0.8, 5], ["two_day", 0.15, 2], ["overnight", 0.05, 1]] as const;

export function stampText(s: Stamp | undefined): string | null {
  return s === undefined ? null : isoDateTime(s.day, s.seconds);
}

export function fulfil(rng: Rng, orders: readonly Order[]): { fulfilled: Fulfilled[]; shipments: Row[] } {
  const fulfilled: Fulfilled[] = [];
  const shipments: Row[] = [];
  for (const order of orders) {
    if (chance(rng, order.channel === "online" ? 0.05 : 0.015)) {
      fulfilled.push({ order, status: "cancelled", shipped: undefined, delivered: undefined });
      continue;
    }
    if (order.channel === "in_store") {
      fulfilled.push({ order, status: "delivered", shipped: undefined, delivered: { day: order.day, seconds: order.seconds } });
      continue;
    }
    const hasBike = order.lines.some((l) => l.product.group === "bike");
    // Bikes are assembled and boxed first; a few orders wait for back-ordered stock.
    const backorder = chance(rng, 0.05) ? between(rng, 4, 12) : 0;
    let shipDay = order.day + weightedIndex(rng, [0.3, 0.4, 0.18, 0.12]) + (hasBike ? between(rng, 1, 3) : 0) + backorder;
    const shipSeconds = between(rng, 9 * 3600, 18 * 3600);
    // Same-day dispatch only for orders placed before the warehouse's pick.
    if (shipDay === order.day && shipSeconds <= order.seconds) shipDay += 1;
    if (shipDay > LAST_DAY) {
      fulfilled.push({ order, status: "pending", shipped: undefined, delivered: undefined });
      continue;
    }
    const shipped = { day: shipDay, seconds: shipSeconds };
    const level = SERVICE_LEVELS[weightedIndex(rng, SERVICE_LEVELS.map((s) => s[1]))] ?? SERVICE_LEVELS[0];
    const carriers = hasBike ? CARRIERS.slice(0, 2) : CARRIERS;
    const carrier = carriers[weightedIndex(rng, carriers.map((c) => c[1]))]?.[0] ?? "UPS";
    const far = order.customer?.homeStoreId === undefined;
    const transit = level[0] === "ground" ? between(rng, 2, 6) + (far ? between(rng, 1, 3) : 0) + (chance(rng, 0.05) ? between(rng, 3, 8) : 0) : level[2] + (chance(rng, 0.1) ? 1 : 0);
    const deliverDay = shipDay + transit;
    const delivered = deliverDay > LAST_DAY ? undefined : { day: deliverDay, seconds: between(rng, 9 * 3600, 20 * 3600) };
    fulfilled.push({ order, status: delivered === undefined ? "shipped" : "delivered", shipped, delivered });
    shipments.push({
      shipment_id: shipments.length + 1,
      order_id: order.id,
      carrier,
      service_level: level[0],
      tracking_number: trackingNumber(rng, carrier),
      ship_to_city: order.customer?.city ?? "Seattle",
      ship_to_state: order.customer?.state ?? "WA",
      shipping_cost: dollars((hasBike ? between(rng, 6_500, 11_000) : between(rng, 850, 2_400)) * (level[0] === "ground" ? 1 : level[0] === "two_day" ? 1.6 : 2.4)),
      estimated_delivery_date: isoDate(shipDay + level[2] + (far ? 2 : 0)),
    });
  }
  return { fulfilled, shipments };
}

function trackingNumber(rng: Rng, carrier: string): string {
  const digits = (n: number): string => Array.from({ length: n }, () => String(between(rng, 0, 9))).join("");
  if (carrier === "UPS") return `1Z${Array.from({ length: 6 }, () => pick(rng, [..."ABCDEFGHJKLMNPRSTUVWXY0123456789"])).join("")}${digits(10)}`;
  if (carrier === "FedEx") return digits(12);
  return `9400${digits(18)}`;
}

export function payments(rng: Rng, fulfilled: readonly Fulfilled[]): Row[] {
  const rows: Row[] = [];
  const add = (orderId: number, method: string, status: string, cents: number, at: Stamp, secondsLater: number): void => {
    rows.push({
      payment_id: rows.length + 1,
      order_id: orderId,
      method,
      status,
      amount: dollars(cents),
      paid_at: isoDateTime(at.day, at.seconds + secondsLater),
      card_last4: method === "card" ? String(between(rng, 0, 9999)).padStart(4, "0") : null,
    });
  };
  for (const f of fulfilled) {
    const o = f.order;
    const total = totalCents(o);
    const at = { day: o.day, seconds: o.seconds };
    const online = o.channel === "online";
    if (f.status === "cancelled") {
      // An online order is cancelled after its card was authorised; a till sale is voided on the spot.
      add(o.id, online && chance(rng, 0.7) ? (chance(rng, 0.8) ? "card" : "paypal") : "card", online && chance(rng, 0.3) ? "failed" : "voided", total, at, 5);
      continue;
    }
    const settled = f.status === "pending" ? "authorized" : "captured";
    if (online && chance(rng, 0.04)) add(o.id, "card", "failed", total, at, 3);
    let remaining = total;
    if (total > 10_000 && chance(rng, 0.05)) {
      const giftCard = Math.min(total - 100, pick(rng, [2_500, 5_000, 10_000]));
      add(o.id, "gift_card", settled, giftCard, at, 8);
      remaining -= giftCard;
    }
    add(o.id, paymentMethod(rng, online, remaining), settled, remaining, at, 12);
  }
  return rows;
}

function paymentMethod(rng: Rng, online: boolean, cents: number): string {
  if (cents >= 150_000 && chance(rng, 0.12)) return "financing";
  const r = rng.next();
  if (online) return r < 0.79 ? "card" : r < 0.97 ? "paypal" : "gift_card";
  return r < 0.78 ? "card" : r < 0.96 ? "cash" : "gift_card";
}
