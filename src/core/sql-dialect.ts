import { z } from "zod";

/** The SQL dialects a registered database can speak. */
export const SqlDialectSchema = z.enum(["sqlite", "postgres"]);
export type SqlDialect = z.infer<typeof SqlDialectSchema>;
