// An MCP client built on the official TypeScript SDK (@modelcontextprotocol/sdk, pinned by
// `cargo xtask install-clis`) that drives the real `subagent mcp` binary over stdio: it lists
// the tools and reads their schemas, calls one with a progress token (collecting the progress
// notifications), then starts a call whose child runs a long command and cancels it once the
// command runs (the SDK sends notifications/cancelled). It prints what it saw as one JSON
// object; crates/cli/tests/suite/mcp.rs checks it.
//
// usage: node client.mjs SDK_DIR SUBAGENT PRESET PROJECT_DIR
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, subagent, preset, project] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(join(sdkDir, "dist/esm", path)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");

const transport = new StdioClientTransport({
  command: subagent,
  args: ["mcp", "--preset", preset, "--cwd", project],
  env: process.env,
  stderr: "inherit",
});
const client = new Client({ name: "interop-test", version: "1.0.0" });
await client.connect(transport);
const seen = { server: client.getServerVersion()?.name };

const { tools } = await client.listTools();
seen.tools = tools.map((tool) => ({
  name: tool.name,
  properties: Object.keys(tool.inputSchema.properties ?? {}),
  required: tool.inputSchema.required,
  listsAgentTypes: (tool.description ?? "").includes("Available agent types (subagent_type):"),
}));

// A call with a progress token: the SDK sends one when onprogress is given.
const progress = [];
const answered = await client.callTool(
  { name: "subagent", arguments: { prompt: "what is the password?", description: "ask" } },
  undefined,
  { onprogress: (p) => progress.push(p) },
);
seen.answer = answered.content[0].text;
seen.isError = answered.isError ?? false;
seen.progressStarted = progress[0]?.message;
seen.progressIncreases = progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress);

// A refusal is a tool result carrying the code, not a protocol error.
const refused = await client.callTool({
  name: "subagent",
  arguments: { prompt: "x", subagent_type: "no-such-type" },
});
seen.refusal = { isError: refused.isError, code: refused._meta?.code };

// A call cancelled once its child's command runs.
const controller = new AbortController();
const long = client.callTool(
  { name: "subagent", arguments: { prompt: "run a long job" } },
  undefined,
  { signal: controller.signal, onprogress: () => {} },
);
await readFile(join(project, "ready.fifo"), "utf8");
controller.abort("changed my mind");
try {
  await long;
  seen.cancelled = "answered";
} catch (error) {
  seen.cancelled = error?.name === "AbortError" || String(error).includes("changed my mind") ? "aborted" : String(error);
}

await client.close();
console.log(JSON.stringify(seen));
