import { app } from "../../src/api/app";

export { CoordinatorObject } from "../../src/objects/coordinator";
export { DatabaseCatalogObject } from "../../src/objects/database-catalog";
export { GpuInstanceObject } from "../../src/objects/gpu-instance";
export { TenantObject } from "../../src/objects/tenant";
export { WorkflowObject } from "../../src/objects/workflow";

export default app;
