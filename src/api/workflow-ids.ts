/** Workflow ids: 128 random bits, so an id cannot be guessed from another one. */
export function newWorkflowId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `wf_${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}
