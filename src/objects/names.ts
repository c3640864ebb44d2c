/** Durable Object names: an instance id is unique within its pool, so its object is named by both. */
export function instanceObjectName(pool: string, instanceId: string): string {
  return `${pool}/${instanceId}`;
}
