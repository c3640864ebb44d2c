/**
 * pq: least laxity first, laxity = D_c − t − t̂_m(c). Why: HexGen-Flow's urgency; a long call with
 * the same deadline as a short one must start earlier. Inputs: the stage deadline and the estimate
 * on this instance. Trade-offs: trusts t̂; a call whose deadline already passed keeps the front.
 */
import type { QueuePolicy } from "./types";

export const leastLaxity: QueuePolicy = { name: "pq", key: (call, est) => call.deadlineS - est };
