import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * ../shared/data beside the checkout (or HEXFLOW_SHARED_DATA). A fresh clone has none: tests that
 * read it are skipped and say so, the rest run on the constants fitted from it.
 */
export const SHARED_DATA: string | undefined = [process.env.HEXFLOW_SHARED_DATA, fileURLToPath(new URL("../../../shared/data", import.meta.url))].find(
  (d): d is string => d !== undefined && d !== "" && existsSync(d),
);

export const NEEDS_SHARED = "needs ../shared/data (reference traces and profiles); skipped without it";
