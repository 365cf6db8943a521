// A real MCP client for the integration tests: the official TypeScript SDK (pinned in package.json) starts
// `paragraf mcp` over stdio, lists its tools, resources and resource templates, makes the calls and reads the
// resources a plan names, and prints what it got as one JSON object. Usage: node mcp_client.mjs PLAN.json, where
// the plan is
//   {"command": "...", "args": [...], "calls": [{"tool": "...", "arguments": {...}}, ...], "read": ["uri", ...]}
// and the output {"server": {...}, "instructions": "...", "tools": [...], "resources": [...], "templates": [...],
// "results": [...], "reads": [...]}, each result either {"structured": ..., "isError": bool} or {"error": {"code":
// n, "message": "..."}} for a JSON-RPC error, each read {"contents": [...]} or such an error.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const transport = new StdioClientTransport({ command: plan.command, args: plan.args, stderr: "ignore" });
const client = new Client({ name: "paragraf-integration-test", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const { resources } = await client.listResources();
const { resourceTemplates } = await client.listResourceTemplates();
const failure = (e) => ({ error: { code: e.code ?? null, message: String(e.message) } });
const results = [];
for (const call of plan.calls) {
  try {
    const answer = await client.callTool({ name: call.tool, arguments: call.arguments });
    results.push({ structured: answer.structuredContent ?? null, isError: answer.isError ?? false });
  } catch (e) {
    results.push(failure(e));
  }
}
const reads = [];
for (const uri of plan.read ?? []) {
  try {
    reads.push({ contents: (await client.readResource({ uri })).contents });
  } catch (e) {
    reads.push(failure(e));
  }
}
process.stdout.write(
  JSON.stringify({
    server: client.getServerVersion(),
    instructions: client.getInstructions() ?? "",
    tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
    resources,
    templates: resourceTemplates,
    results,
    reads,
  }) + "\n",
);
await client.close();
