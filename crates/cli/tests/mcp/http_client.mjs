// An MCP client built on the official TypeScript SDK (@modelcontextprotocol/sdk, pinned by
// `cargo xtask install-clis`) that drives a running `subagent mcp --listen` over streamable
// HTTP with the bearer token of MCP_TEST_TOKEN: a client without the token is refused, then it
// lists the tools, calls one with a progress token, starts a call whose child runs a long
// command and cancels it once the command runs (the SDK sends notifications/cancelled), and
// ends its session. It prints what it saw as one JSON object; crates/cli/tests/suite/mcp_http.rs
// checks it.
//
// usage: MCP_TEST_TOKEN=… node http_client.mjs SDK_DIR URL PROJECT_DIR
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, url, project] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(join(sdkDir, "dist/esm", path)).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const seen = {};

// Without the token the server answers 401 and the SDK's connect fails.
try {
  const anonymous = new Client({ name: "interop-test", version: "1.0.0" });
  await anonymous.connect(new StreamableHTTPClientTransport(new URL(url)));
  seen.unauthorized = false;
} catch (error) {
  seen.unauthorized = String(error).includes("401") || error?.code === 401;
}

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.MCP_TEST_TOKEN}` } },
});
const client = new Client({ name: "interop-test", version: "1.0.0" });
await client.connect(transport);
seen.server = client.getServerVersion()?.name;

const { tools } = await client.listTools();
seen.tools = tools.map((tool) => tool.name);

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

// A call cancelled once its child's command runs.
const controller = new AbortController();
const long = client.callTool(
  { name: "subagent", arguments: { prompt: "run a long job" } },
  undefined,
  { signal: controller.signal },
);
await readFile(join(project, "ready.fifo"), "utf8");
controller.abort("changed my mind");
try {
  await long;
  seen.cancelled = "answered";
} catch (error) {
  seen.cancelled = error?.name === "AbortError" || String(error).includes("changed my mind") ? "aborted" : String(error);
}

await transport.terminateSession();
await client.close();
console.log(JSON.stringify(seen));
