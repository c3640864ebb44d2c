/** Durable Object names: an instance id is unique within its pool, so its object is named by both. */
export function instanceObjectName(pool: string, instanceId: string): string {
  return `${pool}/${instanceId}`;
}

/** The tenant everything belongs to until tenants exist: one database catalog object per tenant. */
export const DEFAULT_TENANT = "default";
