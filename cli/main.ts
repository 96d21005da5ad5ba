// The AWS SDK warns on every start that Node 20 support ends; this is a local tool, run on 20.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
const { main } = await import("./commands.js");

process.exitCode = await main(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  now: () => Date.now(),
});

export {};
