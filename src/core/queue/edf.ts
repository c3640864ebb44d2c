/**
 * edf: earliest deadline first. Why: the classic deadline order (QLM-like); ignores call size.
 * Inputs: the stage deadline. Trade-offs: with equal deadlines, short and long calls tie.
 */
import type { QueuePolicy } from "./types";

export const edf: QueuePolicy = { name: "edf", key: (call) => call.deadlineS };
