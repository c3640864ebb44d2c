import { sharedDataDir } from "../../scripts/lib/cli";

/**
 * ../shared/data beside the checkout (or HEXFLOW_SHARED_DATA). A fresh clone has none: tests that
 * read it are skipped and say so, the rest run on the constants fitted from it.
 */
export const SHARED_DATA: string | undefined = sharedDataDir();

export const NEEDS_SHARED = "needs ../shared/data (reference traces and profiles); skipped without it";
