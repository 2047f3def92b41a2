// The conformance kit's MCP server: stdio, newline-delimited JSON-RPC, one tool (`echo`). It
// appends each method it is asked, and `closed` when its stdin ends, to the file named by
// KIT_MCP_LOG (and its pid first, and `closed` when told to stop by SIGTERM): the kit reads
// there that a child started it, listed its tools and stopped it.
const fs = require("fs");
const log = process.env.KIT_MCP_LOG;
const note = (line) => { if (log) fs.appendFileSync(log, line + "\n"); };
note(`pid ${process.pid}`);
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const tools = [{
  name: "echo",
  description: "KIT-MCP-ECHO: answers with the text it is given.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
}];
let buffer = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffer += chunk;
  let end;
  while ((end = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, end).trim();
    buffer = buffer.slice(end + 1);
    if (!line) continue;
    let message;
    try { message = JSON.parse(line); } catch { continue; }
    if (!message.method) continue;
    note(message.method);
    if (message.id === undefined) continue;
    const params = message.params || {};
    switch (message.method) {
      case "initialize":
        send({ jsonrpc: "2.0", id: message.id, result: {
          protocolVersion: params.protocolVersion || "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "kit", version: "1.0.0" },
        } });
        break;
      case "tools/list":
        send({ jsonrpc: "2.0", id: message.id, result: { tools } });
        break;
      case "tools/call":
        send({ jsonrpc: "2.0", id: message.id, result: {
          content: [{ type: "text", text: String((params.arguments || {}).text) }],
        } });
        break;
      case "ping":
        send({ jsonrpc: "2.0", id: message.id, result: {} });
        break;
      default:
        send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "no such method" } });
    }
  }
});
process.stdin.on("end", () => { note("closed"); process.exit(0); });
process.on("SIGTERM", () => { note("closed"); process.exit(0); });
