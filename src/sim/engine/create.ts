import { KV_READ_FACTOR_PER_TOKEN, DEFAULT_MODEL } from "../../core/gpu";
import type { SimInstance } from "../cluster";
import { ParityEngine } from "./parity";
import type { Engine } from "./types";
import { VllmEngine } from "./vllm";

export type EngineKind = "vllm" | "parity";

export function createEngine(kind: EngineKind, inst: SimInstance): Engine {
  return kind === "parity"
    ? new ParityEngine(inst.cost, inst.gpu, inst.capacity.kvTokens)
    : new VllmEngine(inst.cost, inst.capacity, KV_READ_FACTOR_PER_TOKEN[DEFAULT_MODEL]);
}
