/**
 * The Velo & Co schema, in creation order: every table comes after the tables it references, because D1
 * enforces foreign keys while the file loads. Dates are ISO-8601 TEXT ('YYYY-MM-DD' or
 * 'YYYY-MM-DD HH:MM:SS') so SQLite's date functions work on them; money is REAL dollars; flags are 0/1.
 */
import type { TableSpec } from "./sql-writer";

export const STORES: TableSpec = {
  name: "stores",
  columns: [
    { name: "store_id", type: "INTEGER PRIMARY KEY" },
    { name: "name", type: "TEXT NOT NULL UNIQUE" },
    { name: "street_address", type: "TEXT NOT NULL" },
    { name: "city", type: "TEXT NOT NULL" },
    { name: "state", type: "TEXT NOT NULL" },
    { name: "postal_code", type: "TEXT NOT NULL" },
    { name: "phone", type: "TEXT" },
    { name: "opened_on", type: "TEXT NOT NULL" },
    { name: "square_feet", type: "INTEGER" },
    { name: "has_service_center", type: "INTEGER NOT NULL DEFAULT 1 CHECK (has_service_center IN (0, 1))" },
  ],
};

export const EMPLOYEES: TableSpec = {
  name: "employees",
  columns: [
    { name: "employee_id", type: "INTEGER PRIMARY KEY" },
    { name: "first_name", type: "TEXT NOT NULL" },
    { name: "last_name", type: "TEXT NOT NULL" },
    { name: "email", type: "TEXT NOT NULL UNIQUE" },
    { name: "job_title", type: "TEXT NOT NULL" },
    { name: "department", type: "TEXT NOT NULL" },
    { name: "store_id", type: "INTEGER REFERENCES stores(store_id)" },
    { name: "manager_id", type: "INTEGER REFERENCES employees(employee_id)" },
    { name: "hire_date", type: "TEXT NOT NULL" },
    { name: "termination_date", type: "TEXT" },
    { name: "annual_salary", type: "REAL NOT NULL" },
  ],
  indexes: ["store_id", "manager_id"],
};

export const CUSTOMERS: TableSpec = {
  name: "customers",
  columns: [
    { name: "customer_id", type: "INTEGER PRIMARY KEY" },
    { name: "first_name", type: "TEXT NOT NULL" },
    { name: "last_name", type: "TEXT NOT NULL" },
    { name: "email", type: "TEXT" },
    { name: "phone", type: "TEXT" },
    { name: "city", type: "TEXT NOT NULL" },
    { name: "state", type: "TEXT NOT NULL" },
    { name: "postal_code", type: "TEXT" },
    { name: "home_store_id", type: "INTEGER REFERENCES stores(store_id)" },
    { name: "birth_year", type: "INTEGER" },
    { name: "loyalty_tier", type: "TEXT NOT NULL DEFAULT 'standard' CHECK (loyalty_tier IN ('standard', 'silver', 'gold'))" },
    { name: "marketing_opt_in", type: "INTEGER NOT NULL DEFAULT 0 CHECK (marketing_opt_in IN (0, 1))" },
    { name: "created_at", type: "TEXT NOT NULL" },
  ],
  indexes: ["home_store_id"],
};

export const PRODUCT_CATEGORIES: TableSpec = {
  name: "product_categories",
  columns: [
    { name: "category_id", type: "INTEGER PRIMARY KEY" },
    { name: "name", type: "TEXT NOT NULL UNIQUE" },
    { name: "parent_id", type: "INTEGER REFERENCES product_categories(category_id)" },
  ],
};

export const SUPPLIERS: TableSpec = {
  name: "suppliers",
  columns: [
    { name: "supplier_id", type: "INTEGER PRIMARY KEY" },
    { name: "name", type: "TEXT NOT NULL UNIQUE" },
    { name: "country", type: "TEXT NOT NULL" },
    { name: "contact_email", type: "TEXT" },
    { name: "lead_time_days", type: "INTEGER NOT NULL" },
    { name: "is_active", type: "INTEGER NOT NULL DEFAULT 1 CHECK (is_active IN (0, 1))" },
  ],
};

export const PRODUCTS: TableSpec = {
  name: "products",
  columns: [
    { name: "product_id", type: "INTEGER PRIMARY KEY" },
    { name: "sku", type: "TEXT NOT NULL UNIQUE" },
    { name: "name", type: "TEXT NOT NULL" },
    { name: "brand", type: "TEXT NOT NULL" },
    { name: "category_id", type: "INTEGER NOT NULL REFERENCES product_categories(category_id)" },
    { name: "model_year", type: "INTEGER" },
    { name: "color", type: "TEXT" },
    { name: "list_price", type: "REAL NOT NULL CHECK (list_price > 0)" },
    { name: "weight_kg", type: "REAL" },
    { name: "launched_on", type: "TEXT NOT NULL" },
    { name: "is_discontinued", type: "INTEGER NOT NULL DEFAULT 0 CHECK (is_discontinued IN (0, 1))" },
  ],
  indexes: ["category_id"],
};

export const PRODUCT_SUPPLIERS: TableSpec = {
  name: "product_suppliers",
  columns: [
    { name: "product_id", type: "INTEGER NOT NULL REFERENCES products(product_id)" },
    { name: "supplier_id", type: "INTEGER NOT NULL REFERENCES suppliers(supplier_id)" },
    { name: "unit_cost", type: "REAL NOT NULL" },
    { name: "is_primary", type: "INTEGER NOT NULL DEFAULT 0 CHECK (is_primary IN (0, 1))" },
  ],
  constraints: ["PRIMARY KEY (product_id, supplier_id)"],
  indexes: ["supplier_id"],
};

export const PROMOTIONS: TableSpec = {
  name: "promotions",
  columns: [
    { name: "promotion_id", type: "INTEGER PRIMARY KEY" },
    { name: "code", type: "TEXT NOT NULL UNIQUE" },
    { name: "name", type: "TEXT NOT NULL" },
    { name: "discount_pct", type: "REAL NOT NULL CHECK (discount_pct > 0 AND discount_pct < 100)" },
    { name: "category_id", type: "INTEGER REFERENCES product_categories(category_id)" },
    { name: "starts_on", type: "TEXT NOT NULL" },
    { name: "ends_on", type: "TEXT NOT NULL" },
  ],
};

export const INVENTORY: TableSpec = {
  name: "inventory",
  columns: [
    { name: "store_id", type: "INTEGER NOT NULL REFERENCES stores(store_id)" },
    { name: "product_id", type: "INTEGER NOT NULL REFERENCES products(product_id)" },
    { name: "quantity_on_hand", type: "INTEGER NOT NULL CHECK (quantity_on_hand >= 0)" },
    { name: "reorder_level", type: "INTEGER NOT NULL" },
    { name: "last_restocked_on", type: "TEXT" },
  ],
  constraints: ["PRIMARY KEY (store_id, product_id)"],
  indexes: ["product_id"],
};

export const ORDER_STATUSES = ["pending", "shipped", "delivered", "cancelled", "returned"] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const ORDERS: TableSpec = {
  name: "orders",
  columns: [
    { name: "order_id", type: "INTEGER PRIMARY KEY" },
    { name: "customer_id", type: "INTEGER REFERENCES customers(customer_id)" },
    { name: "store_id", type: "INTEGER NOT NULL REFERENCES stores(store_id)" },
    { name: "employee_id", type: "INTEGER REFERENCES employees(employee_id)" },
    { name: "promotion_id", type: "INTEGER REFERENCES promotions(promotion_id)" },
    { name: "channel", type: "TEXT NOT NULL CHECK (channel IN ('in_store', 'online'))" },
    { name: "status", type: `TEXT NOT NULL CHECK (status IN (${ORDER_STATUSES.map((s) => `'${s}'`).join(", ")}))` },
    { name: "order_date", type: "TEXT NOT NULL" },
    { name: "shipped_at", type: "TEXT" },
    { name: "delivered_at", type: "TEXT" },
    { name: "subtotal", type: "REAL NOT NULL" },
    { name: "discount_amount", type: "REAL NOT NULL DEFAULT 0" },
    { name: "shipping_fee", type: "REAL NOT NULL DEFAULT 0" },
    { name: "total_amount", type: "REAL NOT NULL" },
  ],
  indexes: ["customer_id", "store_id", "employee_id", "order_date"],
};

export const ORDER_ITEMS: TableSpec = {
  name: "order_items",
  columns: [
    { name: "order_item_id", type: "INTEGER PRIMARY KEY" },
    { name: "order_id", type: "INTEGER NOT NULL REFERENCES orders(order_id)" },
    { name: "product_id", type: "INTEGER NOT NULL REFERENCES products(product_id)" },
    { name: "quantity", type: "INTEGER NOT NULL CHECK (quantity > 0)" },
    { name: "unit_price", type: "REAL NOT NULL" },
    { name: "discount_amount", type: "REAL NOT NULL DEFAULT 0" },
  ],
  indexes: ["order_id", "product_id"],
};

export const PAYMENTS: TableSpec = {
  name: "payments",
  columns: [
    { name: "payment_id", type: "INTEGER PRIMARY KEY" },
    { name: "order_id", type: "INTEGER NOT NULL REFERENCES orders(order_id)" },
    { name: "method", type: "TEXT NOT NULL CHECK (method IN ('card', 'cash', 'paypal', 'gift_card', 'financing'))" },
    { name: "status", type: "TEXT NOT NULL CHECK (status IN ('authorized', 'captured', 'voided', 'failed'))" },
    { name: "amount", type: "REAL NOT NULL" },
    { name: "paid_at", type: "TEXT NOT NULL" },
    { name: "card_last4", type: "TEXT" },
  ],
  indexes: ["order_id"],
};

export const SHIPMENTS: TableSpec = {
  name: "shipments",
  columns: [
    { name: "shipment_id", type: "INTEGER PRIMARY KEY" },
    { name: "order_id", type: "INTEGER NOT NULL UNIQUE REFERENCES orders(order_id)" },
    { name: "carrier", type: "TEXT NOT NULL" },
    { name: "service_level", type: "TEXT NOT NULL CHECK (service_level IN ('ground', 'two_day', 'overnight'))" },
    { name: "tracking_number", type: "TEXT NOT NULL" },
    { name: "ship_to_city", type: "TEXT NOT NULL" },
    { name: "ship_to_state", type: "TEXT NOT NULL" },
    { name: "shipping_cost", type: "REAL NOT NULL" },
    { name: "estimated_delivery_date", type: "TEXT NOT NULL" },
  ],
};

export const RETURNS: TableSpec = {
  name: "returns",
  columns: [
    { name: "return_id", type: "INTEGER PRIMARY KEY" },
    { name: "order_item_id", type: "INTEGER NOT NULL REFERENCES order_items(order_item_id)" },
    { name: "processed_by", type: "INTEGER REFERENCES employees(employee_id)" },
    { name: "return_date", type: "TEXT NOT NULL" },
    { name: "quantity", type: "INTEGER NOT NULL CHECK (quantity > 0)" },
    { name: "reason", type: "TEXT NOT NULL" },
    { name: "refund_amount", type: "REAL NOT NULL" },
    { name: "restocked", type: "INTEGER NOT NULL DEFAULT 0 CHECK (restocked IN (0, 1))" },
  ],
  indexes: ["order_item_id"],
};

export const REVIEWS: TableSpec = {
  name: "reviews",
  columns: [
    { name: "review_id", type: "INTEGER PRIMARY KEY" },
    { name: "product_id", type: "INTEGER NOT NULL REFERENCES products(product_id)" },
    { name: "customer_id", type: "INTEGER NOT NULL REFERENCES customers(customer_id)" },
    { name: "order_id", type: "INTEGER REFERENCES orders(order_id)" },
    { name: "rating", type: "INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 5)" },
    { name: "title", type: "TEXT" },
    { name: "body", type: "TEXT" },
    { name: "created_at", type: "TEXT NOT NULL" },
  ],
  constraints: ["UNIQUE (product_id, customer_id)"],
  indexes: ["customer_id"],
};
