import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import { LLMError } from "convoseg/extraction";
import { BedrockConverseLLM, OpenAICompatibleLLM } from "convoseg/extraction/llm";
import { apiKeyCache, CircuitBreaker, guardedLLM } from "convoseg/knowledge/write";
import { describe, expect, it } from "vitest";
import {
  chatCompletion,
  chatError,
  closedAfterEach,
  converseError,
  startChatCompletionsServer,
  startConverseServer,
} from "../support/llm-servers.js";

const startChat = closedAfterEach(startChatCompletionsServer);
const startConverse = closedAfterEach(startConverseServer);

describe("a provider refusing the credentials", () => {
  it("fails at once with a clear error, and the next call reads the key again", async () => {
    const server = await startChat((request) =>
      request.headers.authorization === "Bearer sk-rotated"
        ? chatCompletion('{"candidates":[]}')
        : chatError(401, {}, "Incorrect API key provided"),
    );
    const keys = ["sk-revoked", "sk-rotated"];
    let reads = 0;
    const key = apiKeyCache(async () => keys[reads++], { where: "secret arn:test" });
    const refused: LLMError[] = [];
    const llm = guardedLLM(
      new OpenAICompatibleLLM({
        baseURL: `${server.url}/v1`,
        apiKey: () => key.get(),
        model: "m",
        maxRetries: 3,
      }),
      {
        channel: "c",
        breaker: new CircuitBreaker(),
        onAuthFailure: (error) => {
          refused.push(error);
          key.invalidate();
        },
      },
    );

    const error = await llm.chatJSON([{ role: "user", content: "hi" }]).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LLMError);
    expect(error).toMatchObject({ status: 401, retryable: false });
    expect((error as Error).message).toMatch(
      /not retryable: the provider refused the credentials \(check the API key\)/,
    );
    // Never a retry loop: one request, although the SDK may retry three times.
    expect(server.requests).toHaveLength(1);
    expect(refused).toHaveLength(1);

    await expect(llm.chatJSON([{ role: "user", content: "hi" }])).resolves.toEqual({
      candidates: [],
    });
    expect(reads).toBe(2);
    expect(server.requests).toHaveLength(2);
  });

  it("fails at once on Bedrock's 403, naming the access", async () => {
    const server = await startConverse(() =>
      converseError(403, "AccessDeniedException", "You don't have access to the model"),
    );
    const llm = new BedrockConverseLLM({
      modelId: "amazon.nova-lite-v1:0",
      client: new BedrockRuntimeClient({
        endpoint: server.url,
        region: "us-east-1",
        credentials: { accessKeyId: "test", secretAccessKey: "test" },
      }),
      sleep: async () => {},
    });

    const error = await llm.chatJSON([{ role: "user", content: "hi" }]).catch((e: unknown) => e);

    expect(error).toMatchObject({ status: 403, retryable: false });
    expect((error as Error).message).toMatch(/not retryable: the provider denied access/);
    expect(server.requests).toHaveLength(1);
  });
});
