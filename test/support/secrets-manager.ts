/**
 * Secrets Manager's GetSecretValue on 127.0.0.1, as the SDK calls it (JSON 1.1 over POST), for
 * the connectors' Lambda modules: point `AWS_ENDPOINT_URL_SECRETS_MANAGER` at `url`.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface SecretsServer {
  url: string;
  /** GetSecretValue calls served, by secret id. */
  reads: Map<string, number>;
  close(): Promise<void>;
}

/** Serves `secrets` (secret id → string); any other id is ResourceNotFoundException. */
export async function startSecretsServer(
  secrets: Readonly<Record<string, string>>,
): Promise<SecretsServer> {
  const reads = new Map<string, number>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const type = { "content-type": "application/x-amz-json-1.1" };
      if (request.headers["x-amz-target"] !== "secretsmanager.GetSecretValue") {
        response.writeHead(400, type).end('{"__type":"InvalidRequestException"}');
        return;
      }
      const { SecretId: id } = JSON.parse(Buffer.concat(chunks).toString() || "{}") as {
        SecretId?: string;
      };
      const value = id === undefined ? undefined : secrets[id];
      if (id === undefined || value === undefined) {
        response.writeHead(400, type).end('{"__type":"ResourceNotFoundException"}');
        return;
      }
      reads.set(id, (reads.get(id) ?? 0) + 1);
      response.writeHead(200, type);
      response.end(JSON.stringify({ ARN: id, Name: id, SecretString: value, VersionId: "v1" }));
    });
  }).listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    reads,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
