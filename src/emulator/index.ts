/** The vLLM emulator's public surface, for the CLI, `npm start` and tests. */
export { EmulatorOptionsSchema, resolveConfig, type EmulatorConfig, type EmulatorOptions } from "./config";
export { FAULT_HEADER } from "./faults";
export { OUTPUT_TOKENS_HEADER, PROMPT_TOKENS_HEADER } from "./request-plan";
export { EMULATED_VLLM_VERSION, startEmulator, type EmulatorHandle, type StartOptions } from "./server";
