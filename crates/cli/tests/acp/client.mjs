// An ACP client built on the official TypeScript SDK (@agentclientprotocol/sdk, pinned by
// `cargo xtask install-clis`) that drives the real `subagent acp` binary: initialize,
// session/new, a prompt whose parent delegates (the child's two commands ask permission: one is
// allowed, one rejected), then a prompt whose command is cancelled once it runs. It prints what
// it saw as one JSON object; crates/cli/tests/suite/acp.rs checks it.
//
// usage: node client.mjs SDK_ACP_JS SUBAGENT PRESET PROJECT_DIR
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [sdkPath, subagent, preset, project] = process.argv.slice(2);
const acp = await import(pathToFileURL(sdkPath).href);

const agent = spawn(subagent, ["acp", "--preset", preset], {
  stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) => agent.on("exit", (code) => resolve(code)));

const updates = [];
const questions = [];
let connection;
let sessionId;

const client = {
  async sessionUpdate(params) {
    updates.push(params.update);
  },
  async requestPermission(params) {
    const title = params.toolCall.title;
    let optionId = "reject_once";
    if (title.includes("allowed.txt") || title.includes("sleep")) {
      optionId = "allow_once";
    }
    questions.push({ title, toolCallId: params.toolCall.toolCallId, optionId });
    if (title.includes("sleep")) {
      // Cancel once the command runs: it writes to the fifo first.
      readFile(join(project, "ready.fifo"), "utf8").then(() =>
        connection.cancel({ sessionId }),
      );
    }
    return { outcome: { outcome: "selected", optionId } };
  },
};

connection = new acp.ClientSideConnection(
  () => client,
  acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout)),
);

const init = await connection.initialize({
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: {},
  clientInfo: { name: "acp-sdk-interop-test", version: "1" },
});
({ sessionId } = await connection.newSession({ cwd: project, mcpServers: [] }));
const text = (t) => [{ type: "text", text: t }];
const first = await connection.prompt({ sessionId, prompt: text("delegate the edits") });
const firstUpdates = updates.length;
const second = await connection.prompt({ sessionId, prompt: text("run a long job") });
agent.stdin.end();
const exitCode = await exited;

const delegation = updates.find((u) => u.sessionUpdate === "tool_call" && u.kind === "think");
const ofDelegation = updates.filter(
  (u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === delegation?.toolCallId,
);
const shown = (u) => u.content?.map((c) => c.content?.text ?? "").join("") ?? "";
const message = (list) =>
  list
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => u.content.text)
    .join("");
const longCall = updates.slice(firstUpdates).find((u) => u.sessionUpdate === "tool_call");
console.log(
  JSON.stringify({
    protocolVersion: init.protocolVersion,
    agentName: init.agentInfo?.name,
    loadSession: init.agentCapabilities?.loadSession,
    stopReasons: [first.stopReason, second.stopReason],
    delegation: { title: delegation?.title, kind: delegation?.kind },
    childProgressShown: ofDelegation.some(
      (u) => u.status === "in_progress" && shown(u).includes("touch allowed.txt"),
    ),
    delegationEnd: ofDelegation.at(-1)?.status,
    firstAnswer: message(updates.slice(0, firstUpdates)),
    questions: questions.sort((a, b) => a.title.localeCompare(b.title)),
    longCall: { title: longCall?.title, kind: longCall?.kind },
    exitCode,
  }),
);
