import { KEYPHRASE_EXTRACTOR_NAME } from "convoseg/extraction/offline";
import type { ExtractorKind } from "convoseg/knowledge/config";
import { DEFAULT_MODELS, type LocalModel } from "../../local/model.js";

/** The model flags every command that extracts takes. */
export interface ModelFlags {
  extractor?: string;
  "llm-endpoint"?: string;
  model?: string;
}

/** Whether an endpoint's host is this machine's loopback: a server that needs no key. */
function onThisMachine(endpoint: string | undefined): boolean {
  if (endpoint === undefined) return false;
  const host = new URL(endpoint).hostname;
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * The model `--extractor`, `--llm-endpoint` and `--model` choose, checked: an endpoint or a
 * model without `--extractor` means an OpenAI-compatible one, `offline` takes neither, and an
 * endpoint is an http(s) URL. `choices` are the extractors the command offers, in the order its
 * errors list them; one that is not an extractor (`none`) comes back as itself.
 */
export function parseModelFlags<Extra extends string>(
  values: ModelFlags,
  choices: readonly (ExtractorKind | Extra)[],
): LocalModel | Extra {
  const endpoint = values["llm-endpoint"];
  const extractor =
    values.extractor ??
    (endpoint !== undefined || values.model !== undefined ? "openai" : "offline");
  if (!(choices as readonly string[]).includes(extractor)) {
    throw new Error(
      `--extractor must be one of ${choices.join(", ")} (got ${JSON.stringify(extractor)})`,
    );
  }
  if (extractor !== "offline" && extractor !== "openai" && extractor !== "bedrock") {
    return extractor as Extra;
  }
  if (endpoint !== undefined) {
    if (extractor === "offline")
      throw new Error("--llm-endpoint needs --extractor openai or bedrock");
    if (!/^https?:\/\/[^\s/]+/.test(endpoint)) {
      throw new Error(`--llm-endpoint must be an http(s) URL (got ${JSON.stringify(endpoint)})`);
    }
  }
  if (values.model !== undefined && extractor === "offline") {
    throw new Error("--model needs --extractor openai or bedrock (offline has no model)");
  }
  const keyless = extractor === "openai" && !process.env.OPENAI_API_KEY;
  if (keyless && !onThisMachine(endpoint)) {
    throw new Error(
      `--extractor openai needs OPENAI_API_KEY set: the key of ${endpoint ?? "api.openai.com"} (a server on this machine, such as --llm-endpoint http://127.0.0.1:8080/v1, needs none)`,
    );
  }
  return {
    extractor,
    endpoint,
    // A local server (llama.cpp, Ollama) checks no key; the SDK wants one all the same.
    ...(keyless ? { apiKey: "no-key" } : {}),
    modelId:
      extractor === "offline"
        ? KEYPHRASE_EXTRACTOR_NAME
        : (values.model ?? DEFAULT_MODELS[extractor]),
  };
}
