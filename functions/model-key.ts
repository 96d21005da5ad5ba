/**
 * The OpenAI-compatible endpoint's API key as the functions that call a model read it
 * (extraction, and the tick with `askLinks`): from where the configuration says it is kept, when a
 * call needs it, cached for an hour and read again after a 401/403; a failed read is retried by
 * the next call.
 */
import { getSecret } from "@aws-lambda-powertools/parameters/secrets";
import { getParameter } from "@aws-lambda-powertools/parameters/ssm";
import type { ApiKeySource } from "convoseg/knowledge/config";
import { type ApiKeyCache, apiKeyCache } from "convoseg/knowledge/write";

export function apiKeyOf(source: ApiKeySource | undefined): ApiKeyCache | undefined {
  if (source === undefined) return undefined;
  // The cache is ours (it must forget a refused key): the utilities' own is bypassed.
  return apiKeyCache(
    () =>
      source.kind === "secret"
        ? getSecret(source.id, { forceFetch: true })
        : getParameter(source.name, { decrypt: true, forceFetch: true }),
    { where: source.kind === "secret" ? `secret ${source.id}` : `parameter ${source.name}` },
  );
}
