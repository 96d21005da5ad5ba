/** A window reply cache in memory, as the results store keeps one: copies in, copies out. */
import type { WindowOutput, WindowOutputs } from "convoseg/extraction";

export function memoryOutputs(): WindowOutputs & { stored: Map<string, WindowOutput> } {
  const stored = new Map<string, WindowOutput>();
  return {
    stored,
    get: async (prompt) => structuredClone(stored.get(prompt)),
    put: async (prompt, output) => {
      stored.set(prompt, structuredClone(output));
    },
  };
}
