/**
 * Stock on hand per store and product at the snapshot. Bigger stores carry more; stores without a
 * service centre carry few components; discontinued products linger in a few stores as leftovers.
 * Some lines sit below their reorder level, and a few are out of stock.
 */
import type { Rng } from "../../../src/core/rng";
import { LAST_DAY, isoDate } from "./calendar";
import type { Product } from "./catalog";
import { STORE_SITES } from "./places";
import type { Group } from "./product-lines";
import { between, chance } from "./random";
import type { Row } from "./sql-writer";

const TYPICAL_STOCK: Readonly<Record<Group, readonly [number, number]>> = {
  bike: [3, 2],
  component: [14, 6],
  accessory: [18, 8],
  apparel: [10, 5],
};

export function generateInventory(rng: Rng, products: readonly Product[]): Row[] {
  const rows: Row[] = [];
  STORE_SITES.forEach((site, i) => {
    for (const p of products) {
      if (p.launchDay > LAST_DAY) continue;
      const discontinued = p.sellUntil !== undefined;
      const carried = discontinued ? chance(rng, 0.25) : p.group === "component" && !site.hasServiceCenter ? chance(rng, 0.4) : chance(rng, 0.9);
      if (!carried) continue;
      const [typical, reorder] = TYPICAL_STOCK[p.group];
      const level = Math.max(1, Math.round(reorder * site.traffic));
      let quantity = Math.round(typical * site.traffic * (0.5 + 1.5 * rng.next()) * Math.sqrt(p.popularity));
      if (discontinued) quantity = between(rng, 0, 2);
      else if (chance(rng, 0.04)) quantity = 0;
      rows.push({
        store_id: i + 1,
        product_id: p.id,
        quantity_on_hand: quantity,
        reorder_level: discontinued ? 0 : level + between(rng, 0, Math.ceil(level / 3)),
        last_restocked_on: discontinued && chance(rng, 0.5) ? null : isoDate(LAST_DAY - between(rng, 0, discontinued ? 400 : 90)),
      });
    }
  });
  return rows;
}
