/**
 * A scripted embedding model for measuring search without one: feature hashing of a text's
 * lowercased, crudely stemmed words into 256 dimensions, served as an OpenAI-compatible
 * `POST /v1/embeddings` on 127.0.0.1. Deterministic: "installing nvidia drivers" and "nvidia
 * driver install" are one vector, and texts sharing words are near; it knows no synonyms.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const HASHING_DIMENSIONS = 256;

/** Words too common to say what a text is about. */
const STOP = new Set(
  "the and for you are but not with this that have has was can what how why when where who from any all its it's your just get got use".split(
    " ",
  ),
);
const ENDINGS = ["ing", "ed", "es", "s"];

/** The words of `text` that carry meaning, lowercased, a common English ending taken off. */
function hashedWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
    .filter((word) => word.length >= 3 && !STOP.has(word))
    .map((word) => {
      const ending = ENDINGS.find((e) => word.endsWith(e) && word.length - e.length >= 3);
      return ending === undefined ? word : word.slice(0, -ending.length);
    });
}

/** FNV-1a, 32 bits. */
function fnv1a(word: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) {
    hash ^= word.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The text's unit vector: each word adds ±1 at its hashed place; a text without words, e_0. */
export function hashingEmbedding(text: string, dimensions = HASHING_DIMENSIONS): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of hashedWords(text)) {
    const hash = fnv1a(word);
    vector[hash % dimensions] += hash & 0x80000000 ? -1 : 1;
  }
  const norm = Math.hypot(...vector);
  if (norm === 0) {
    vector[0] = 1;
    return vector;
  }
  return vector.map((x) => x / norm);
}

/** The server, its base URL (`/v1` included) and how many texts it embedded. */
export interface HashingServer {
  url: string;
  texts(): number;
  close(): Promise<void>;
}

/** Starts the hashing model as an OpenAI-compatible embeddings server on 127.0.0.1. */
export async function startHashingServer(): Promise<HashingServer> {
  let texts = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== "POST" || req.url !== "/v1/embeddings") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"error":{"message":"no such route"}}');
      return;
    }
    const { input } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { input: string[] };
    texts += input.length;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        object: "list",
        data: input.map((text, index) => ({
          object: "embedding",
          index,
          embedding: hashingEmbedding(text),
        })),
        model: "hashing",
        usage: { prompt_tokens: 0, total_tokens: 0 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    texts: () => texts,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
