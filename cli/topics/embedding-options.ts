/**
 * The flags that merge topics by embeddings as well as tokens (`--embeddings`, `--embeddings-url`,
 * `--similarity`) of `topics`, and the first two, which choose the model, of `search`.
 */
import type { TopicEmbeddings } from "convoseg/knowledge/read";
import { DEFAULT_SIMILARITY, DEFAULT_TITAN_EMBEDDINGS_MODEL, type Embedder } from "convoseg/topics";

export const EMBEDDING_OPTIONS = {
  embeddings: { type: "string" },
  "embeddings-url": { type: "string" },
  similarity: { type: "string" },
} as const;

export const EMBEDDING_HELP = `  --embeddings M    also merge topics whose embeddings are similar: bedrock (Titan,
                    ${DEFAULT_TITAN_EMBEDDINGS_MODEL}), bedrock:MODEL, or openai:MODEL
                    (an OpenAI-compatible /embeddings; key from $OPENAI_API_KEY)
  --embeddings-url U  the OpenAI-compatible API's base URL, /v1 included (default OpenAI's)
  --similarity S    the cosine similarity, above 0 and at most 1, at which topics merge
                    (default ${DEFAULT_SIMILARITY}; needs --embeddings)`;

/** `search`'s flags of the model: `--embeddings` and `--embeddings-url`. */
export const SEARCH_EMBEDDING_OPTIONS = {
  embeddings: EMBEDDING_OPTIONS.embeddings,
  "embeddings-url": EMBEDDING_OPTIONS["embeddings-url"],
} as const;

export const SEARCH_EMBEDDING_HELP = `  --embeddings M    also rank by meaning: the index holds each document's embedding by this
                    model, and a query's hits by words and by nearness are fused: bedrock
                    (Titan, ${DEFAULT_TITAN_EMBEDDINGS_MODEL}), bedrock:MODEL, or
                    openai:MODEL (an OpenAI-compatible /embeddings; key from $OPENAI_API_KEY)
  --embeddings-url U  the OpenAI-compatible API's base URL, /v1 included (default OpenAI's)`;

/** The model flags of a command that serves search (`serve`'s GET /search, `mcp`'s tool). */
export const servedEmbeddingHelp = (
  what: string,
) => `  --embeddings M    ${what} ranks by meaning too, the index holding each document's
                    embedding by this model: bedrock (Titan,
                    ${DEFAULT_TITAN_EMBEDDINGS_MODEL}), bedrock:MODEL, or openai:MODEL
                    (an OpenAI-compatible /embeddings; key from $OPENAI_API_KEY)
  --embeddings-url U  the OpenAI-compatible API's base URL, /v1 included (default OpenAI's)`;

/** The embeddings the flags ask for, or undefined; throws an Error naming the flag at fault. */
export function parseEmbeddingFlags(values: {
  embeddings?: string;
  "embeddings-url"?: string;
  similarity?: string;
}): TopicEmbeddings | undefined {
  const { embeddings: spec, similarity: text } = values;
  if (spec === undefined && text !== undefined) throw new Error("--similarity needs --embeddings");
  const embedder = parseEmbedder(values);
  if (embedder === undefined) return undefined;
  const similarity = text === undefined ? undefined : Number(text);
  if (similarity !== undefined && !(similarity > 0 && similarity <= 1)) {
    throw new Error(`--similarity must be above 0 and at most 1 (got ${JSON.stringify(text)})`);
  }
  return { embedder, ...(similarity === undefined ? {} : { similarity }) };
}

/**
 * The model `--embeddings` (and `--embeddings-url`) name, or undefined when not asked; throws an
 * Error naming the flag at fault.
 */
export function parseEmbedder(values: {
  embeddings?: string;
  "embeddings-url"?: string;
}): Embedder | undefined {
  const { embeddings: spec, "embeddings-url": url } = values;
  if (spec === undefined) {
    if (url !== undefined) throw new Error("--embeddings-url needs --embeddings openai:MODEL");
    return undefined;
  }
  const [provider, ...rest] = spec.split(":");
  const model = rest.join(":");
  if (provider === "bedrock") {
    if (url !== undefined) throw new Error("--embeddings-url is for openai:MODEL, not bedrock");
    return lazyEmbedder(
      model || DEFAULT_TITAN_EMBEDDINGS_MODEL,
      async ({ BedrockTitanEmbedder }) =>
        new BedrockTitanEmbedder(model === "" ? {} : { modelId: model }),
    );
  }
  if (provider === "openai" && model !== "") {
    if (!process.env.OPENAI_API_KEY) {
      throw new Error(
        "--embeddings openai:MODEL needs OPENAI_API_KEY set (any string for a server that checks none)",
      );
    }
    return lazyEmbedder(
      model,
      async ({ OpenAIEmbedder }) =>
        new OpenAIEmbedder({ model, ...(url === undefined ? {} : { baseURL: url }) }),
    );
  }
  throw new Error(
    `--embeddings must be bedrock, bedrock:MODEL or openai:MODEL (got ${JSON.stringify(spec)})`,
  );
}

type Embedders = typeof import("convoseg/extraction/llm");

/**
 * An embedder whose model client (the AWS and OpenAI SDKs) is loaded when it is first asked:
 * `topics` without `--embeddings`, the common case, answers without loading either.
 */
function lazyEmbedder(model: string, make: (sdk: Embedders) => Promise<Embedder>): Embedder {
  let made: Promise<Embedder> | undefined;
  return {
    model,
    embed: async (texts, options) => {
      made ??= import("convoseg/extraction/llm").then(make);
      return (await made).embed(texts, options);
    },
  };
}
