import { describe, expect, it, vi } from "vitest";
import { parseEmbedder, parseEmbeddingFlags } from "../../cli/topics/embedding-options.js";

describe("the embeddings flags", () => {
  it("name the model, loading no client until it is asked", () => {
    vi.stubEnv("OPENAI_API_KEY", "test");
    expect(parseEmbedder({})).toBeUndefined();
    expect(parseEmbedder({ embeddings: "bedrock" })?.model).toBe("amazon.titan-embed-text-v2:0");
    expect(parseEmbedder({ embeddings: "bedrock:amazon.titan-embed-text-v1" })?.model).toBe(
      "amazon.titan-embed-text-v1",
    );
    expect(
      parseEmbedder({ embeddings: "openai:m", "embeddings-url": "http://127.0.0.1:1/v1" })?.model,
    ).toBe("m");
    expect(parseEmbeddingFlags({ embeddings: "openai:m", similarity: "0.9" })).toMatchObject({
      similarity: 0.9,
    });
  });

  it("name the flag at fault", () => {
    vi.stubEnv("OPENAI_API_KEY", "");
    expect(() => parseEmbedder({ "embeddings-url": "http://x/v1" })).toThrow(
      "--embeddings-url needs --embeddings openai:MODEL",
    );
    expect(() => parseEmbedder({ embeddings: "bedrock", "embeddings-url": "http://x" })).toThrow(
      "--embeddings-url is for openai:MODEL, not bedrock",
    );
    expect(() => parseEmbedder({ embeddings: "openai:m" })).toThrow("needs OPENAI_API_KEY set");
    expect(() => parseEmbedder({ embeddings: "openai:" })).toThrow(
      '--embeddings must be bedrock, bedrock:MODEL or openai:MODEL (got "openai:")',
    );
    expect(() => parseEmbeddingFlags({ similarity: "0.9" })).toThrow(
      "--similarity needs --embeddings",
    );
    expect(() => parseEmbeddingFlags({ embeddings: "bedrock", similarity: "2" })).toThrow(
      '--similarity must be above 0 and at most 1 (got "2")',
    );
  });
});
